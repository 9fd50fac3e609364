"""A shell command line as the simple commands it runs. Pure.

Enough of POSIX sh for the action gate: `shlex` words; `;`, `&&`, `||`, `|`, `&`, newlines
and parentheses between commands; `$(...)` and backticks read as command lines of their own;
heredoc bodies skipped; wrappers (`sudo`, `env`, `command`, `xargs`, `nohup`, `timeout`…) and
leading assignments stripped; `sh -c STRING` and `eval` read as their own line; `cd DIR`
followed, so a redirection's file is known relative to where the line started. A `#` is
a word, never a comment: once quotes are gone a comment cannot be told from a quoted `#`,
and reading one as words can only add caution.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator

import msgspec

from service.core.errors import Invalid

MAX_DEPTH = 8
_PUNCTUATION = "();<>|&\n"
_OPERATOR = re.compile(r"&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|[<>]|&&|\|\||\|&|;;&|;;|;&|[;&|()\n]")
_FD_BEFORE_REDIRECT = re.compile(r"(^|[\s;&|()])\d+(?=[<>])")
_HEREDOC = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
_TRUNCATING = {">", ">|", "&>", ">&"}
_REDIRECTS = _TRUNCATING | {">>", "&>>", "<", "<<", "<<<", "<<-", "<>", "<&"}
_KEYWORDS = {"if", "then", "else", "elif", "do", "while", "until", "{", "!", "time"}
_SHELLS = {"sh", "bash", "dash", "zsh", "ksh", "ash"}
# wrappers that run the rest of their words as a command, with the options that take a value
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "--user", "--group"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "--unset", "--chdir"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset({"-I", "-i", "-n", "-P", "-L", "-l", "-d", "-E", "-e", "-s", "-a", "--delimiter"}),
}
_WRAPPER_ARGUMENTS = {"timeout": 1}  # positional words a wrapper takes before the command


class Unreadable(Invalid):
    """A command line the gate cannot read (an open quote, nesting too deep)."""


class Simple(msgspec.Struct, frozen=True):
    """One simple command: its words after wrappers, the files its redirections truncate, and
    the directory it runs in relative to where the line started (None: a `cd` the gate cannot
    follow)."""

    argv: tuple[str, ...]
    truncates: tuple[str, ...] = ()
    where: str | None = "."

    def path(self, word: str) -> str | None:
        """A file word as a path from where the line started (None when that is unknown: a
        variable, a substitution or a glob the shell would expand)."""
        if any(c in word for c in "$`*?["):
            return None
        if word.startswith(("/", "~")):
            return posixpath.normpath(word)
        return None if self.where is None else posixpath.normpath(posixpath.join(self.where, word))


def commands(line: str, depth: int = 0) -> list[Simple]:
    """Every simple command a line runs, nested ones included, in order."""
    if depth > MAX_DEPTH:
        raise Unreadable("the command nests shells too deeply to read")
    found: list[Simple] = []
    where: str | None = "."
    stack: list[str | None] = []
    for words, truncates in _split(_words(line)):
        nested = [inner for w in words + truncates for inner in _substitutions(w)]
        for text in nested:
            found += commands(text, depth + 1)
        if words and words[0] in ("(", ")"):
            if words[0] == "(":
                stack.append(where)
            elif stack:
                where = stack.pop()
            continue
        argv = unwrap(words)
        if argv[:1] in (["cd"], ["pushd"], ["popd"]):
            where = _cd(where, argv[1:]) if argv[0] != "popd" else None
            continue
        inner = _shell_string(argv)
        if inner is not None:
            found += commands(inner, depth + 1)
            continue
        if argv or truncates:
            found.append(Simple(tuple(argv), tuple(truncates), where))
    return found


def _words(line: str) -> list[str]:
    text = _FD_BEFORE_REDIRECT.sub(r"\1", _without_heredocs(line.replace("\\\n", " ")))
    lexer = shlex.shlex(text, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    lexer.whitespace = " \t\r"
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as exc:
        raise Unreadable(f"the command cannot be read as shell words ({exc})") from exc
    words: list[str] = []
    for token in tokens:
        if token and all(c in _PUNCTUATION for c in token):
            words += _OPERATOR.findall(token)
        else:
            words.append(token)
    return words


def _without_heredocs(line: str) -> str:
    """The line with every heredoc's body cut out (its text is data, not commands)."""
    lines = line.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        for dash, _, delimiter in _HEREDOC.findall(lines[i]):
            i += 1
            while i < len(lines) and (lines[i].lstrip("\t") if dash else lines[i]) != delimiter:
                i += 1
        i += 1
    return "\n".join(out)


def _split(words: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """(words, files truncated by redirections) of each simple command; parentheses alone."""
    argv: list[str] = []
    truncates: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word in _REDIRECTS:
            target = words[i] if i < len(words) and not _is_operator(words[i]) else None
            i += target is not None
            if target is not None and word in _TRUNCATING and not (word == ">&" and _is_fd(target)):
                truncates.append(target)
        elif _is_operator(word):
            if argv or truncates:
                yield argv, truncates
            argv, truncates = [], []
            if word in ("(", ")"):
                yield [word], []
        else:
            argv.append(word)
    if argv or truncates:
        yield argv, truncates


def _is_operator(word: str) -> bool:
    return _OPERATOR.fullmatch(word) is not None and word not in _REDIRECTS


def _is_fd(word: str) -> bool:
    return word.isdigit() or word == "-"


def _substitutions(word: str) -> list[str]:
    """The command lines inside a word's `$(...)` and backticks."""
    texts = word.split("$(")[1:] + word.split("`")[1::2]
    return [t for t in texts if t.strip()]


def unwrap(words: list[str]) -> list[str]:
    """The command a line of words runs: keywords, assignments and wrappers stripped."""
    argv = list(words)
    for _ in range(len(words) + 1):
        if argv and (argv[0] in _KEYWORDS or _is_assignment(argv[0])):
            argv = argv[1:]
            continue
        name = posixpath.basename(argv[0]) if argv else ""
        if name not in _WRAPPERS:
            break
        if name == "command" and any(w in ("-v", "-V") for w in argv[1:2]):
            return []  # `command -v X` looks X up, runs nothing
        argv = _after_wrapper(name, argv[1:])
    if argv:
        argv[0] = posixpath.basename(argv[0])
    return argv


def _after_wrapper(name: str, rest: list[str]) -> list[str]:
    takes_value = _WRAPPERS[name]
    positional = _WRAPPER_ARGUMENTS.get(name, 0)
    i = 0
    while i < len(rest):
        word = rest[i]
        if word == "--":
            i += 1
            break
        if name == "env" and word in ("-S", "--split-string") and i + 1 < len(rest):
            return _words(rest[i + 1]) + rest[i + 2 :]
        if name == "env" and _is_assignment(word):
            i += 1
        elif word.startswith("-") and len(word) > 1:
            i += 2 if word in takes_value else 1
        elif positional:
            positional -= 1
            i += 1
        else:
            break
    return rest[i:]


def _is_assignment(word: str) -> bool:
    name, equals, _ = word.partition("=")
    return bool(equals) and name.isidentifier()


def _cd(where: str | None, args: list[str]) -> str | None:
    args = [a for a in args if a != "--" and not (a.startswith("-") and len(a) > 1)]
    if where is None or len(args) != 1 or args[0] == "-" or "$" in args[0]:
        return None
    if args[0].startswith(("/", "~")):
        return posixpath.normpath(args[0])
    return posixpath.normpath(posixpath.join(where, args[0]))


def _shell_string(argv: list[str]) -> str | None:
    """The command string of `sh -c STRING` or the joined words of `eval`."""
    if not argv:
        return None
    if argv[0] == "eval":
        return " ".join(argv[1:])
    if argv[0] in _SHELLS:
        for i, word in enumerate(argv[1:], start=1):
            if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", word) and i + 1 < len(argv):
                return argv[i + 1]
    return None
