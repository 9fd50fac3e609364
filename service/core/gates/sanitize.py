"""The sanitize gate: machine-local and secret facts never enter the synced record.

Every event passes through `check_event` before it is appended, whatever the entry point
(CLI, HTTP, git receive, import, fetch); every string of workspace.json passes through
`check_strings` before the file is written. What the gate refuses and what it lets through is
`RULES` below, which `self help sanitize` prints; the key words are `_KEY_WORDS` and their
neighbours, the shapes of secrets are in `secret_formats`.

A refusal is `Unsanitary`: its message names each offending key path (`payload.text`,
`refs.env`, `payload.notes[2]`) and the kind of fact, and never repeats the value. A key
that is itself unsafe to print shows as `<key>` in the path. Data that is not JSON (bytes,
non-string keys, nesting deeper than MAX_DEPTH) is `Invalid`.

The caller may pass `local`: literal strings it knows are machine-local (the checkout
roots, the home directory). The pure model cannot read them; the shell that can passes them.

`origin.by` is checked like everything else, so an identity is a handle, not an email.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from service.core.errors import Invalid, Refused
from service.core.gates import secret_formats as formats
from service.core.gates.controls import BIDI, KEY_CONTROL, control_fact
from service.core.gates.sanitize_keys import key_fact as key_fact  # re-exported: the gate's API

RULES = """\
What the synced record refuses (the sanitize gate)

Every event (written, imported or fetched) and every string of workspace.json passes this
gate. A refusal exits 2 and names the key path (payload.text, refs.env,
workspace.json.aliases.sprint.label) and the kind of fact; it never repeats the value.

Refused:
  keys of an event that name machine-local or secret facts: pid, ppid, process_id, cwd,
    workdir, home, host, hostname, ip, env, environ, password, secret, *_token, api_key,
    private_key, credentials, cookie, authorization, stdout, stderr
  concrete machine paths: /home/<name>/..., /Users/<name>/..., /root, C:\\Users\\<name>\\...
    and other drive paths, \\\\server\\share, /tmp/..., /var/folders/..., /mnt/...,
    ~<name>/..., file:// URLs, and this machine's home, store and checkout folders
  email addresses and user@host names (git@github.com:org/repo, alice@laptop)
  known token formats: GitHub (ghp_, gho_, ghs_, ghu_, ghr_, github_pat_), GitLab (glpat-),
    Slack (xoxb-, xoxp-, ...), AWS (AKIA...), Google (AIza...), OpenAI and Anthropic (sk-...),
    Stripe, npm, PyPI, Hugging Face, Docker Hub, Notion, DigitalOcean, Shopify, Linear, Groq,
    Grafana, SendGrid, Vault; JSON web tokens; PEM private key blocks; bearer tokens and
    authorization headers; user:password@ in URLs
  values under secret-named keys, and assignments: GITHUB_TOKEN=..., password: ...,
    "api_key": "..."
  long (32+) random-looking runs that are no prefixed id, and long hex outside a commit key
  environment dumps: PATH=, HOME=, USER=... assignments, or three KEY=value lines
  control characters: C0 and C1 (carriage return too; newline and tab pass) and DEL, and the
    bidirectional embedding, override and isolate controls (U+202A-U+202E, U+2066-U+2069),
    which reorder what a reader sees; the marks U+200E and U+200F pass. Whatever self
    prints (an argument, a path or a URL echoed back) shows these as \\uXXXX

Accepted (the same on every machine):
  ~/... paths: ~/.claude/settings.json names the same place on every machine
  repo-relative paths (src/app.py), URLs, /etc/hosts and other system paths
  ids that name their kind first: session_01RR19nj3Epadxj44kZZsgTF, msg_01..., toolu_01...;
    UUIDs and ULIDs; a full commit sha under a commit key (commit, commits, sha)
  @alice, pkg@1.2.3, actions/checkout@v4
  in workspace.json, a key is judged by what it holds, not by what it names (an alias
    verb may be `host`)
"""

MAX_DEPTH = 64
_ADVICE_FACTS = (
    "machine-local and secret facts stay off the synced record "
    "(drop them, or keep them in the machine's local state)"
)
_ADVICE_CONTROL = "remove the control characters (they would redraw or reorder the text on every screen)"
_CONTROL_WORDS = "control character"


class Unsanitary(Refused):
    """An event holds a machine-local or secret fact. `findings` is ((path, kind), …)."""

    def __init__(self, findings: Sequence[tuple[str, str]]) -> None:
        self.findings: tuple[tuple[str, str], ...] = tuple(findings)
        listed = "; ".join(f"{path} {kind}" for path, kind in self.findings)
        controls = [_CONTROL_WORDS in kind for _, kind in self.findings]
        advice = [_ADVICE_CONTROL] if any(controls) else []
        if not all(controls):
            advice.append(_ADVICE_FACTS)
        super().__init__(f"refused: {listed}; {'; '.join(advice)}", code="sanitize")


# --- values ---------------------------------------------------------------------------
#
# Speed: this runs on every append (and on every event an import or a fetch brings). Most
# strings are ids, labels, timestamps and short prose, so each pattern is gated by a
# substring test (`"@" in text`, C speed) and patterns begin with a literal where they can,
# which lets the regex engine skip ahead instead of trying every position. Measured on a
# loaded 2-core machine: 90k-115k typical events/s, 43k/s for events carrying 500-character
# texts; every pattern runs in time linear in its input (checked on 40 kB adversarial
# strings), so a hostile client cannot stall an append.


_LOCAL_PATH_KIND = "holds an absolute machine-local path"
_POSIX_LOCAL = re.compile(
    r"/(?<![A-Za-z0-9_.~\-]/)(?:"
    r"(?:home|Users|users)/[^/\s]"
    r"|root(?![A-Za-z0-9_.\-])"
    r"|(?:tmp|var/tmp|var/folders|private/var|private/tmp|run/user|mnt|media|Volumes"
    r"|workspaces?)/[^/\s]"
    r"|proc/[0-9]"
    r")"
)
_DRIVE = re.compile(r":[\\/](?<=[A-Za-z]:[\\/])(?<![A-Za-z0-9][A-Za-z]:[\\/])")
_UNC = re.compile(r"\\\\(?<!\\\\\\\\)[A-Za-z0-9._$\-]+\\")
# `~alice/` names a user; `~/` is whoever reads it, the same place on every machine.
_TILDE_USER = re.compile(r"~(?<![A-Za-z0-9_~/]~)[A-Za-z_][A-Za-z0-9_.\-]*/")

_USER_HOST_KIND = "holds a user@host name"
_USER_HOST = re.compile(
    r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9_][A-Za-z0-9_.\-]*@"
    r"(?:[A-Za-z][A-Za-z0-9.\-]*:|localhost(?![A-Za-z0-9_.\-]))"
    r"|\bssh[ \t]+(?:-\S+[ \t]+)*[A-Za-z0-9_.\-]+@[A-Za-z0-9]"
)
_EMAIL_KIND = "holds an email address"
_EMAIL = re.compile(
    r"@(?<=[A-Za-z0-9._%+\-]@)[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![A-Za-z0-9\-])"
)
_SHA = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")


def value_fact(text: str, commit: bool = False, local: Sequence[str] = ()) -> str | None:
    """The kind of machine-local or secret fact a string holds, or None when it is clean.

    `commit` says the string sits under a `commit` key, where a full commit sha belongs.
    `local` lists literal machine-local strings (see `check_event`).
    """
    size = len(text)
    short_word = size < formats.TOKEN_WORD or (size < 32 and (text.islower() or text.isdigit()))
    if short_word and text.isalnum():
        # One short word, or an id: no pattern below matches it.
        return _local_fact(text, local)
    if not text.isprintable():
        kind = control_fact(text)
        if kind is not None:
            return kind
    if commit and _SHA.fullmatch(text):
        return None
    longest = 0
    if size >= formats.TOKEN_WORD:
        for word in text.split():
            if len(word) >= formats.TOKEN_WORD:
                longest = max(longest, len(word))
                kind = formats.word_token_fact(word)
                if kind is not None:
                    return kind
    kind = formats.secret_fact(text)
    if kind is not None:
        return kind
    if "@" in text:
        if _USER_HOST.search(text):
            return _USER_HOST_KIND
        if _EMAIL.search(text):
            return _EMAIL_KIND
    if "/" in text or "\\" in text or "~" in text:
        kind = _path_fact(text)
        if kind is not None:
            return kind
    if ":" in text or "=" in text:
        kind = formats.assignment_fact(text)
        if kind is not None:
            return kind
    return formats.random_run_fact(text, longest) or _local_fact(text, local)


def _path_fact(text: str) -> str | None:
    if "/" in text and (_POSIX_LOCAL.search(text) or "file:/" in text):
        return _LOCAL_PATH_KIND
    if (":\\" in text or ":/" in text) and _DRIVE.search(text):
        return _LOCAL_PATH_KIND
    if "\\\\" in text and _UNC.search(text):
        return _LOCAL_PATH_KIND
    if "~" in text and _TILDE_USER.search(text):
        return _LOCAL_PATH_KIND
    return None


def _local_fact(text: str, local: Sequence[str]) -> str | None:
    for fact in local:
        if fact in text:
            return _LOCAL_PATH_KIND
    return None


# --- the walk -------------------------------------------------------------------------

_COMMIT_KEYS = frozenset({"commit", "commits", "sha"})
_UNSAFE_KEY = "is a key that holds a machine-local or secret fact"
_Findings = list[tuple[str, str]]


def check_event(data: dict[str, object], *, local: Sequence[str] = ()) -> None:
    """Refuse (Unsanitary) an event that holds a machine-local or secret fact anywhere.

    `local`: literal machine-local strings (checkout roots, the home directory) that must
    not appear in any value; entries shorter than four characters are ignored.
    """
    if not isinstance(data, dict):
        raise Invalid("an event is a JSON object")
    findings: _Findings = []
    _walk_dict(data, (), findings, _usable(local), 0)
    if findings:
        raise Unsanitary(findings)


def check(value: object, path: str, *, local: Sequence[str] = ()) -> None:
    """Refuse (Unsanitary) `value`, found at key path `path`, if it holds such a fact."""
    findings: _Findings = []
    _walk(value, (path,) if path else (), findings, False, _usable(local), 0)
    if findings:
        raise Unsanitary(findings)


def check_strings(value: object, path: str, *, local: Sequence[str] = ()) -> None:
    """Refuse (Unsanitary) a settings document (workspace.json) with a machine-local or
    secret fact in any string, its keys included. Key names are not judged as an event's
    are: a settings key is a name the user chose (an alias verb such as `host`)."""
    findings: _Findings = []
    _walk_strings(value, (path,) if path else (), findings, _usable(local), 0)
    if findings:
        raise Unsanitary(findings)


def _walk_strings(
    value: object, parts: tuple[str, ...], findings: _Findings, local: tuple[str, ...], depth: int
) -> None:
    if depth >= MAX_DEPTH:
        raise Invalid(f"{_path(parts)} is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, str):
        kind = value_fact(value, local=local)
        if kind is not None:
            findings.append((_path(parts), kind))
    elif isinstance(value, dict):
        for key, item in value.items():
            if type(key) is not str:
                raise Invalid(f"{_path(parts)} has a key that is not a string")
            fact = _key_text_fact(key, local)
            shown = key if fact is None else "<key>"
            if fact is not None:
                findings.append((_path((*parts, shown)), fact))
            _walk_strings(item, (*parts, shown), findings, local, depth + 1)
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _walk_strings(item, (*parts, f"[{index}]"), findings, local, depth + 1)
    elif not (value is None or isinstance(value, bool | int | float)):
        raise Invalid(f"{_path(parts)} holds a {type(value).__name__}, which is not JSON data")


def _usable(local: Sequence[str]) -> tuple[str, ...]:
    return tuple(fact for fact in local if len(fact) >= 4)


def _path(parts: tuple[str, ...]) -> str:
    out = ""
    for part in parts:
        out += part if part.startswith("[") or not out else "." + part
    return out or "(root)"


def _key_verdict(key: object) -> tuple[str, str | None]:
    """How a key shows in a path, and the fact it names or holds (None when it is ordinary)."""
    if type(key) is not str:
        raise Invalid("an object has a key that is not a string")
    fact = _key_text_fact(key, ())
    if fact is not None:
        verdict: tuple[str, str | None] = ("<key>", fact)
    else:
        verdict = (key, key_fact(key))
    if len(_KEY_VERDICTS) > 4096:
        _KEY_VERDICTS.clear()
    _KEY_VERDICTS[key] = verdict
    return verdict


_KEY_VERDICTS: dict[object, tuple[str, str | None]] = {}


def _key_text_fact(key: str, local: tuple[str, ...]) -> str | None:
    """What a key holds as text (not what it names): a control character, of which a key may
    hold none at all, not even a newline; or a machine-local or secret fact."""
    control = KEY_CONTROL.search(key)
    if control is not None:
        what = "a bidirectional control character" if BIDI.match(control.group()) else "a control character"
        return f"is a key that holds {what} (U+{ord(control.group()):04X})"
    if value_fact(key, local=local) is not None:
        return _UNSAFE_KEY
    return None


def _walk_dict(
    data: Mapping[object, object] | dict[str, object],
    parts: tuple[str, ...],
    findings: _Findings,
    local: tuple[str, ...],
    depth: int,
) -> None:
    if depth >= MAX_DEPTH:
        raise Invalid(f"{_path(parts)} is nested deeper than {MAX_DEPTH} levels")
    verdicts = _KEY_VERDICTS
    for key, item in data.items():
        shown, kind = verdicts.get(key) or _key_verdict(key)
        if kind is not None:
            findings.append((_path((*parts, shown)), kind))
            if shown != "<key>":
                continue
        if type(item) is str:
            # The common case inline: one short word (a label, a slug, an actor) is clean.
            if local or len(item) >= formats.TOKEN_WORD or not item.isalnum():
                fact = value_fact(item, shown in _COMMIT_KEYS, local)
                if fact is not None:
                    findings.append((_path((*parts, shown)), fact))
        elif item is None or type(item) is bool or type(item) is int:
            continue
        else:
            _walk(item, (*parts, shown), findings, shown in _COMMIT_KEYS, local, depth + 1)


def _walk(
    value: object,
    parts: tuple[str, ...],
    findings: _Findings,
    commit: bool,
    local: tuple[str, ...],
    depth: int,
) -> None:
    if isinstance(value, str):
        kind = value_fact(value, commit, local)
        if kind is not None:
            findings.append((_path(parts), kind))
    elif isinstance(value, dict):
        _walk_dict(value, parts, findings, local, depth)
    elif isinstance(value, list | tuple):
        if depth >= MAX_DEPTH:
            raise Invalid(f"{_path(parts)} is nested deeper than {MAX_DEPTH} levels")
        for index, item in enumerate(value):
            if type(item) is str:
                kind = value_fact(item, commit, local)
                if kind is not None:
                    findings.append((_path((*parts, f"[{index}]")), kind))
            else:
                _walk(item, (*parts, f"[{index}]"), findings, commit, local, depth + 1)
    elif value is None or isinstance(value, bool | int | float):
        return
    else:
        raise Invalid(f"{_path(parts)} holds a {type(value).__name__}, which is not JSON data")
