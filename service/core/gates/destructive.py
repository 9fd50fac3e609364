"""What a shell command destroys: the action gate's threshold for Bash calls. Pure.

A command asks a person when it deletes files (`rm`, `unlink`, `find -delete`, `shred`),
truncates one (`truncate`, a `>` redirection or `tee` onto a file that exists), discards git
work (`git clean -f`, `git reset --hard`, `git checkout -- .`, `git branch -D`, `git stash
drop`), drops SQL data, force-pushes, deletes a remote branch, or pushes a shared branch.
Whether a file exists and which branch a bare `git push` writes are facts the shell reads from
the checkout (`questions` says which, `Checkout` carries the answers); an unknown fact counts
against the call.
"""

from __future__ import annotations

import re

import msgspec

from service.core.gates.shellcmd import Simple, Unreadable, commands

SHARED_BRANCHES = ("main", "master", "trunk", "develop", "production")
_SQL = [
    (re.compile(r"\b(drop\s+(table|database|schema)|truncate\s+table)\b", re.I), "drops data"),
    (re.compile(r"\bdelete\s+from\b", re.I), "deletes rows"),
]
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
_PUSH_VALUED = {"--repo", "--push-option", "--receive-pack", "--exec", "-o"}
_GIT_VALUED = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


class Questions(msgspec.Struct, frozen=True):
    """The checkout facts a ruling depends on: whether these files exist, and the branch."""

    files: tuple[str, ...] = ()
    branch: bool = False


class Checkout(msgspec.Struct, frozen=True):
    """What the shell read from the checkout a call runs in: whether each asked-about file
    exists, the branch checked out and the branch its upstream (`branch.<b>.merge`) names."""

    files: dict[str, bool] = msgspec.field(default_factory=dict)
    branch: str | None = None
    upstream: str | None = None


def questions(command: str) -> Questions:
    """The facts `reason` will look at for this command (none for an unreadable one)."""
    try:
        simples = commands(command)
    except Unreadable:
        return Questions()
    files = [p for s in simples for w in _overwritten(s) if (p := s.path(w)) is not None]
    branch = any(_git(s.argv)[:1] == ["push"] for s in simples)
    return Questions(tuple(dict.fromkeys(files)), branch)


def reason(command: str, checkout: Checkout) -> str | None:
    """Why the command needs a person, or None when it destroys nothing shared."""
    for pattern, what in _SQL:
        if pattern.search(command):
            return f"irreversible: the command {what}"
    try:
        simples = commands(command)
    except Unreadable as exc:
        return f"{exc}"
    for simple in simples:
        found = _program(list(simple.argv), checkout) or _truncation(simple, checkout)
        if found:
            return found
    return None


def _program(argv: list[str], checkout: Checkout) -> str | None:
    name, args = (argv[0], argv[1:]) if argv else ("", [])
    if name in ("rm", "unlink", "shred", "srm", "wipe") and "--help" not in args:
        recursive = _flag(args, "rRf", ("--recursive", "--force"))
        return f"irreversible: `{name}` deletes files{' recursively or by force' if recursive else ''}"
    if name == "find":
        return _find(args, checkout)
    if (
        name == "truncate"
        or name.startswith("mkfs")
        or (name == "dd" and any(a.startswith("of=") for a in args))
    ):
        return f"irreversible: `{name}` overwrites a file or device"
    if name == "git":
        return _git_reason(_git(argv), checkout)
    return None


def _find(args: list[str], checkout: Checkout) -> str | None:
    if "-delete" in args:
        return "irreversible: `find -delete` deletes files"
    for i, word in enumerate(args):
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            inner = []
            for w in args[i + 1 :]:
                if w in (";", "+"):
                    break
                inner.append(w)
            found = _program(inner, checkout)
            if found:
                return found
    return None


def _truncation(simple: Simple, checkout: Checkout) -> str | None:
    for word in _overwritten(simple):
        path = simple.path(word)
        if path is None or checkout.files.get(path, True):
            return f"irreversible: the command overwrites the existing file {word}"
    return None


def _overwritten(simple: Simple) -> list[str]:
    """The files a command truncates: its `>` redirections, and `tee`'s files without -a."""
    files = list(simple.truncates)
    argv = simple.argv
    if argv[:1] == ("tee",) and not _flag(list(argv[1:]), "a", ("--append",)):
        files += [w for w in argv[1:] if not w.startswith("-")]
    return [f for f in files if not f.startswith(_DEVICES)]


def _flag(args: list[str], letters: str, long: tuple[str, ...]) -> bool:
    """Whether any of the short letters (alone or combined, `-rf`) or long options is given."""
    for word in args:
        if word == "--":
            break
        if word.startswith("--"):
            if word.split("=", 1)[0] in long:
                return True
        elif word.startswith("-") and any(c in letters for c in word[1:]):
            return True
    return False


def _git(argv: tuple[str, ...] | list[str]) -> list[str]:
    """A git command's subcommand and its words, git's own options skipped."""
    if not argv or argv[0] != "git":
        return []
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in _GIT_VALUED else 1
    return list(argv[i:])


def _git_reason(words: list[str], checkout: Checkout) -> str | None:
    sub, args = (words[0], words[1:]) if words else ("", [])
    if sub == "push":
        return _push(args, checkout)
    if sub == "clean" and _flag(args, "f", ("--force",)) and not _flag(args, "n", ("--dry-run",)):
        return "irreversible: `git clean -f` deletes untracked files"
    if sub == "reset" and "--hard" in args:
        return "irreversible: `git reset --hard` discards uncommitted work"
    unstages = sub == "restore" and _flag(args, "S", ("--staged",)) and not _flag(args, "W", ("--worktree",))
    if (
        sub in ("checkout", "restore")
        and not unstages
        and ("." in args or _flag(args, "f", ("--force",)) or (sub == "checkout" and "--" in args[:-1]))
    ):
        return f"irreversible: `git {sub}` discards uncommitted changes"
    if sub == "branch" and (
        _flag(args, "D", ()) or (_flag(args, "d", ("--delete",)) and _flag(args, "f", ("--force",)))
    ):
        return "irreversible: `git branch -D` deletes a branch"
    if sub == "stash" and args[:1] in (["drop"], ["clear"]):
        return "irreversible: `git stash drop` deletes stashed work"
    return None


def _push(args: list[str], checkout: Checkout) -> str | None:
    options, positionals = _push_words(args)
    refspecs = positionals[1:]
    if options & {"force"} or any(r.startswith("+") for r in refspecs):
        return "irreversible: a force-push rewrites shared history"
    if options & {"delete", "prune", "mirror"} or any(r.startswith(":") and len(r) > 1 for r in refspecs):
        return "irreversible: the push deletes a remote branch or tag"
    if "all" in options:
        return "the push writes every branch, shared ones included"
    if "tags" in options and not refspecs:
        return None
    targets = [_destination(r, checkout) for r in refspecs] or _upstream(checkout)
    if not targets or None in targets:
        return "the push writes a branch the gate cannot read from the checkout"
    shared = [t for t in targets if t in SHARED_BRANCHES]
    return f"the push writes the shared branch {shared[0]}" if shared else None


def _push_words(args: list[str]) -> tuple[set[str], list[str]]:
    options: set[str] = set()
    positionals: list[str] = []
    letters = {"f": "force", "d": "delete"}
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            positionals += args[i:]
            break
        if word.startswith("--"):
            name = word[2:].split("=", 1)[0]
            options.add(
                {"force-with-lease": "force", "force-if-includes": "force", "branches": "all"}.get(name, name)
            )
            i += word in _PUSH_VALUED
        elif word.startswith("-") and len(word) > 1:
            options |= {letters[c] for c in word[1:] if c in letters}
            i += word == "-o"
        else:
            positionals.append(word)
    return options, positionals


def _destination(refspec: str, checkout: Checkout) -> str | None:
    """The branch a refspec writes (HEAD: the branch checked out; None when unknown)."""
    dst = refspec.lstrip("+").rsplit(":", 1)[-1]
    if dst in ("HEAD", "@"):
        return checkout.branch
    return dst.removeprefix("refs/heads/")


def _upstream(checkout: Checkout) -> list[str | None]:
    """The branches a push without refspecs may write: the upstream's, and the branch's own
    name (push.default `current`, or `simple` with no upstream set)."""
    return [b for b in (checkout.upstream, checkout.branch) if b]
