"""The sanitize gate: machine-local and secret facts never enter the synced record.

Every event passes through `check_event` before it is appended, whatever the entry point
(CLI, HTTP, git receive, import). The gate walks every key and value of the event, nested
objects and arrays included, and refuses:

- keys that name machine-local or secret facts: process ids (`pid`, `ppid`, `process_id`,
  `processId`, `worker_pid`), working and home directories (`cwd`, `workdir`, `home`),
  hosts (`host`, `hostname`, `ip`), environments (`env`, `environ`), credentials
  (`password`, `secret`, `*_token`, `api_key`, `private_key`, `credentials`, `cookie`,
  `authorization`) and raw process output (`stdout`, `stderr`). Ordinary names pass:
  `branch`, `work`, `code`, `commit`, `session`, `tokens_per_char`, `key`, `homepage`;
- values holding absolute machine-local paths (`/home/…`, `/Users/…`, `/root`, `/tmp/…`,
  `/var/folders/…`, `/mnt/…`, `C:\\Users\\…` or any drive path, `\\\\server\\share`, `~/…`,
  `file://`); repo-relative paths (`src/app.py`), URLs and well-known system paths pass;
- email addresses and `user@host` names (`git@github.com:org/repo`, `alice@laptop:~$`,
  `ssh deploy@box`); `@alice`, `pkg@1.2.3`, `actions/checkout@v4` pass;
- API tokens (GitHub, GitLab, Slack, AWS, Google, `sk-…`, Stripe, npm, PyPI), JSON web
  tokens, PEM private key blocks, bearer tokens and authorization headers, credentials in
  URLs (`https://user:pass@…`), and secret assignments (`GITHUB_TOKEN=…`, `password=…`,
  `"api_key": "…"`);
- long runs (32+) of hex that mix digits and letters, and long base64-like runs that read
  as random (see `_random_looking`); a full commit sha passes under a `commit` key;
- environment dumps: `PATH=`, `HOME=`, `USER=`… assignments, or three or more `KEY=value`
  lines;
- control characters: C0 and C1 other than newline and tab (so carriage return too), and
  DEL. Keys may hold no control character at all.

A refusal is `Unsanitary`: its message names each offending key path (`payload.text`,
`refs.env`, `payload.notes[2]`) and the kind of fact, and never repeats the value. A key
that is itself unsafe to print shows as `<key>` in the path. Data that is not JSON (bytes,
non-string keys, nesting deeper than MAX_DEPTH) is `Invalid`.

The caller may pass `local`: literal strings it knows are machine-local (the checkout
roots, the home directory). The pure model cannot read them; the shell that can passes them.

`origin.by` is checked like everything else, so an identity is a handle, not an email.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from itertools import pairwise

from service.model.errors import Invalid, Refused

MAX_DEPTH = 64
_ADVICE = (
    "machine-local and secret facts stay off the synced record "
    "(drop them, or keep them in the machine's local state)"
)


class Unsanitary(Refused):
    """An event holds a machine-local or secret fact. `findings` is ((path, kind), …)."""

    def __init__(self, findings: Sequence[tuple[str, str]]) -> None:
        self.findings: tuple[tuple[str, str], ...] = tuple(findings)
        listed = "; ".join(f"{path} {kind}" for path, kind in self.findings)
        super().__init__(f"refused: {listed}; {_ADVICE}")


# --- keys -----------------------------------------------------------------------------

_KEY_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

_PID = "names a process id"
_CWD = "names a working directory"
_HOME = "names a home directory"
_HOST = "names a host"
_ENV = "holds an environment"
_CREDENTIAL = "names a credential"
_OUTPUT = "holds raw process output"

_KEY_WORDS: dict[str, str] = {
    "pid": _PID,
    "pids": _PID,
    "ppid": _PID,
    "pgid": _PID,
    "tgid": _PID,
    "cwd": _CWD,
    "pwd": _CWD,
    "oldpwd": _CWD,
    "home": _HOME,
    "homedir": _HOME,
    "userprofile": _HOME,
    "host": _HOST,
    "hosts": _HOST,
    "hostname": _HOST,
    "hostnames": _HOST,
    "fqdn": _HOST,
    "password": _CREDENTIAL,
    "passwords": _CREDENTIAL,
    "passwd": _CREDENTIAL,
    "passphrase": _CREDENTIAL,
    "secret": _CREDENTIAL,
    "secrets": _CREDENTIAL,
    "credential": _CREDENTIAL,
    "credentials": _CREDENTIAL,
    "creds": _CREDENTIAL,
    "apikey": _CREDENTIAL,
    "apikeys": _CREDENTIAL,
    "privkey": _CREDENTIAL,
    "cookie": _CREDENTIAL,
    "cookies": _CREDENTIAL,
    "authorization": _CREDENTIAL,
    "stdout": _OUTPUT,
    "stderr": _OUTPUT,
}
_KEY_JOINED: dict[str, str] = {
    "processid": _PID,
    "processids": _PID,
    "procid": _PID,
    "pidfile": _PID,
    "workdir": _CWD,
    "workingdir": _CWD,
    "workingdirectory": _CWD,
    "currentdir": _CWD,
    "currentdirectory": _CWD,
    "checkoutdir": _CWD,
    "checkoutpath": _CWD,
    "checkoutroot": _CWD,
    "worktreepath": _CWD,
    "abspath": _CWD,
    "absolutepath": _CWD,
    "tmpdir": _CWD,
    "tempdir": _CWD,
    "homedirectory": _HOME,
    "homepath": _HOME,
    "machine": _HOST,
    "machineid": _HOST,
    "machinename": _HOST,
    "computername": _HOST,
    "nodename": _HOST,
    "ip": _HOST,
    "ipaddr": _HOST,
    "ipaddress": _HOST,
    "macaddress": _HOST,
    "env": _ENV,
    "envs": _ENV,
    "environ": _ENV,
    "envvars": _ENV,
    "environmentvariables": _ENV,
    "auth": _CREDENTIAL,
    "rawoutput": _OUTPUT,
    "provideroutput": _OUTPUT,
}
# Keys where a word above is innocent: a home page is not a home directory.
_KEY_INNOCENT = frozenset({"homepage", "homeurl", "homepageurl"})
_KEY_PAIRS: dict[tuple[str, str], str] = {
    ("process", "id"): _PID,
    ("process", "ids"): _PID,
    ("proc", "id"): _PID,
    ("pid", "file"): _PID,
}
# `<x>_key` is a credential when <x> says so; a bare `key` is an ordinary name.
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "access",
        "secret",
        "private",
        "signing",
        "encryption",
        "ssh",
        "auth",
        "client",
        "master",
        "deploy",
        "session",
    }
)
_KEY_CACHE: dict[str, str | None] = {}


def key_fact(key: str) -> str | None:
    """The kind of machine-local or secret fact a key names, or None for an ordinary key."""
    if key in _KEY_CACHE:
        return _KEY_CACHE[key]
    kind = _key_fact(key)
    if len(_KEY_CACHE) > 4096:
        _KEY_CACHE.clear()
    _KEY_CACHE[key] = kind
    return kind


def _key_fact(key: str) -> str | None:
    words = [w.lower() for w in _KEY_WORD.findall(key)]
    if not words:
        return None
    joined = "".join(words)
    if joined in _KEY_INNOCENT:
        return None
    kind = _KEY_JOINED.get(joined)
    if kind is not None:
        return kind
    for word in words:
        kind = _KEY_WORDS.get(word)
        if kind is not None:
            return kind
    for pair in pairwise(words):
        kind = _KEY_PAIRS.get(pair)
        if kind is not None:
            return kind
    last = words[-1]
    if last == "token" or last == "auth":
        return _CREDENTIAL
    if words[0] in ("env", "environ"):
        return _ENV
    if last in ("key", "keys") and len(words) > 1 and words[-2] in _KEY_QUALIFIERS:
        return _CREDENTIAL
    return None


# --- values ---------------------------------------------------------------------------
#
# Speed: this runs on every append (and on every event an import or a fetch brings). Most
# strings are ids, labels, timestamps and short prose, so each pattern is gated by a
# substring test (`"@" in text`, C speed) and patterns begin with a literal where they can,
# which lets the regex engine skip ahead instead of trying every position. Measured on a
# loaded 2-core machine: 90k-115k typical events/s, 43k/s for events carrying 500-character
# texts; every pattern runs in time linear in its input (checked on 40 kB adversarial
# strings), so a hostile client cannot stall an append.

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_KEY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

# Every token is one word of at least 20 characters; only such words are searched. The
# patterns are one flat alternation of literal-led branches, which the regex engine scans
# quickly; the kind is found by trying them one by one only after the alternation matched.
_TOKEN_WORD = 20
_TOKEN_PATTERNS: tuple[tuple[str, str], ...] = (
    ("holds a GitHub token", r"gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"),
    ("holds a GitLab token", r"glpat-[A-Za-z0-9_\-]{20,}"),
    ("holds a Slack token", r"xox[bpars]-[A-Za-z0-9\-]{15,}"),
    ("holds an AWS access key id", r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ("holds a Google API key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("holds an API secret key", r"sk-(?<![A-Za-z0-9]sk-)[A-Za-z0-9_\-]{17,}"),
    ("holds a Stripe secret key", r"[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("holds an npm token", r"npm_[A-Za-z0-9]{36}"),
    ("holds a PyPI token", r"pypi-[A-Za-z0-9_\-]{32,}"),
    ("holds a JSON web token", r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)
_TOKENS = re.compile("|".join(pattern for _, pattern in _TOKEN_PATTERNS))
_TOKEN_KINDS = tuple((kind, re.compile(pattern)) for kind, pattern in _TOKEN_PATTERNS)
_PEM_KIND = "holds a private key block"
_PEM = re.compile(r"-----BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----")
_BEARER_KIND = "holds a bearer token"
_BEARER = re.compile(r"[Bb]earer[ \t]+(?=[A-Za-z\-._~+/]*[0-9])[A-Za-z0-9\-._~+/]{12,}")
_AUTH_HEADER_KIND = "holds an authorization header"
_AUTH_HEADER = re.compile(r"[Aa]uthorization\s*:\s*(?i:bearer|basic|token|digest)\s+\S")

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
_TILDE = re.compile(r"~(?<![A-Za-z0-9_~/]~)(?:[A-Za-z_][A-Za-z0-9_.\-]*)?/")

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
_URL_CREDENTIALS_KIND = "holds credentials in a URL"
_URL_CREDENTIALS = re.compile(r"://(?:[^\s/@:]*:[^\s/@]+|[A-Za-z0-9_\-.~%]{20,})@")

_ENV_KIND = "holds an environment dump"
_ENV_WELL_KNOWN = re.compile(
    r"(?<![A-Za-z0-9_$])(?:PATH|HOME|USER|LOGNAME|SHELL|PWD|OLDPWD|HOSTNAME|TMPDIR"
    r"|USERPROFILE|SSH_AUTH_SOCK)="
)
_ENV_LINE = r"[ \t]*(?:export[ \t]+)?[A-Z_][A-Z0-9_]*=[^\n]*"
# Three or more KEY=value lines (blank lines between them allowed) read as a dump.
_ENV_LINES = re.compile(rf"(?m)^{_ENV_LINE}(?:\n[ \t]*)*\n{_ENV_LINE}(?:\n[ \t]*)*\n{_ENV_LINE}")
_ASSIGNMENT_KIND = "holds a credential assignment"
_SECRET_WORD = (
    r"(?:password|passwd|passphrase|secret|token|api_?key|access_?key|private_?key"
    r"|credentials?)"
)
# The secret word ends the name (`GITHUB_TOKEN=`, `password =`), whatever comes before it.
_ASSIGN_EQUALS = re.compile(rf"(?i){_SECRET_WORD}\s*=\s*['\"]?[^\s'\"]")
_ASSIGN_COLON = re.compile(
    rf"(?i){_SECRET_WORD}['\"]?\s*:\s*"
    r"(?:['\"][^'\"\s]{4,}|(?=\S*[0-9!#$%^&*])[^\s'\"]{6,})"
)
_SECRET_HINT = re.compile(r"pass|secret|token|key|credential")

_ENTROPY_KIND = "holds a long high-entropy string (a likely secret)"
_RUN = re.compile(r"[A-Za-z0-9+/_\-]{32,}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_HEX_DIGIT = re.compile(r"[0-9]")
_HEX_LETTER = re.compile(r"[a-fA-F]")
_SAMPLE = 1024  # characters of a run its randomness is judged on
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_COMMIT_URL = re.compile(r"/(?:commit|commits|tree|blob)/[0-9a-f]{7,64}(?![0-9a-f])")
_SHA = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
ENTROPY_BITS = 3.5
HEX_ENTROPY_BITS = 3.0  # random hex of 32 characters: 3.5 to 4


def _entropy(text: str) -> float:
    """Shannon entropy of `text`, in bits per character."""
    counts: dict[str, int] = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    size = len(text)
    return -sum(n / size * math.log2(n / size) for n in counts.values())


def _random_looking(run: str) -> bool:
    """Whether a long run of base64-like characters reads as random rather than as words.

    Words, identifiers and URL paths change between letters and digits rarely and change
    case at word starts; random base64 does both about every third character. Measured on
    the Python and documentation sources of a workstation, this flags their embedded
    base64 blobs and random ids and almost nothing else, and misses about 1 in 100
    random 32-character base64 strings (3 in 100 single-case ones).
    """
    letter_digit = case_changes = letter_pairs = 0
    for a, b in pairwise(run):
        a_alpha, b_alpha = a.isalpha(), b.isalpha()
        if (a_alpha and b.isdigit()) or (a.isdigit() and b_alpha):
            letter_digit += 1
        elif a_alpha and b_alpha:
            letter_pairs += 1
            if a.isupper() != b.isupper():
                case_changes += 1
    if _entropy(run) < ENTROPY_BITS:
        return False
    digits = letter_digit / (len(run) - 1)
    if letter_pairs and case_changes:
        return digits + 0.6 * case_changes / letter_pairs >= 0.3
    return digits >= 0.2


def _secret_run(text: str) -> bool:
    """Whether `text` holds a long base64-like run that reads as random, or a long run of
    hex digits (digits and letters mixed, not a repeated pattern)."""
    if "/commit" in text or "/tree/" in text or "/blob/" in text:
        text = _COMMIT_URL.sub("/commit/", text)
    for match in _RUN.finditer(text):
        run = _UUID.sub("-", match.group())
        if len(run) < 32:
            continue
        if _random_looking(run[:_SAMPLE]):
            return True
        for hex_run in _HEX.finditer(run):
            digits = hex_run.group()[:_SAMPLE]
            if (
                _HEX_DIGIT.search(digits)
                and _HEX_LETTER.search(digits)
                and _entropy(digits) >= HEX_ENTROPY_BITS
            ):
                return True
    return False


def value_fact(text: str, commit: bool = False, local: Sequence[str] = ()) -> str | None:
    """The kind of machine-local or secret fact a string holds, or None when it is clean.

    `commit` says the string sits under a `commit` key, where a full commit sha belongs.
    `local` lists literal machine-local strings (see `check_event`).
    """
    size = len(text)
    short_word = size < _TOKEN_WORD or (size < 32 and (text.islower() or text.isdigit()))
    if short_word and text.isalnum():
        # One short word, or an id: no pattern below matches it.
        return _local_fact(text, local)
    if not text.isprintable():
        control = _CONTROL.search(text)
        if control is not None:
            return f"holds a control character (U+{ord(control.group()):04X})"
    if commit and _SHA.fullmatch(text):
        return None
    longest = 0
    if size >= _TOKEN_WORD:
        for word in text.split():
            if len(word) >= _TOKEN_WORD:
                longest = max(longest, len(word))
                if _TOKENS.search(word):
                    return next(kind for kind, pattern in _TOKEN_KINDS if pattern.search(word))
    if "-----BEGIN" in text and _PEM.search(text):
        return _PEM_KIND
    if "earer" in text and _BEARER.search(text):
        return _BEARER_KIND
    if "uthorization" in text and _AUTH_HEADER.search(text):
        return _AUTH_HEADER_KIND
    if "@" in text:
        if "://" in text and _URL_CREDENTIALS.search(text):
            return _URL_CREDENTIALS_KIND
        if _USER_HOST.search(text):
            return _USER_HOST_KIND
        if _EMAIL.search(text):
            return _EMAIL_KIND
    if "/" in text or "\\" in text or "~" in text:
        kind = _path_fact(text)
        if kind is not None:
            return kind
    if ":" in text or "=" in text:
        kind = _assignment_fact(text)
        if kind is not None:
            return kind
    if longest >= 32 and _secret_run(text):
        return _ENTROPY_KIND
    return _local_fact(text, local)


def _path_fact(text: str) -> str | None:
    if "/" in text and (_POSIX_LOCAL.search(text) or "file:/" in text):
        return _LOCAL_PATH_KIND
    if (":\\" in text or ":/" in text) and _DRIVE.search(text):
        return _LOCAL_PATH_KIND
    if "\\\\" in text and _UNC.search(text):
        return _LOCAL_PATH_KIND
    if "~" in text and _TILDE.search(text):
        return _LOCAL_PATH_KIND
    return None


def _assignment_fact(text: str) -> str | None:
    if "=" in text and (_ENV_WELL_KNOWN.search(text) or ("\n" in text and _ENV_LINES.search(text))):
        return _ENV_KIND
    if not _SECRET_HINT.search(text.lower()):
        return None
    if "=" in text and _ASSIGN_EQUALS.search(text):
        return _ASSIGNMENT_KIND
    if ":" in text and _ASSIGN_COLON.search(text):
        return _ASSIGNMENT_KIND
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
    if _KEY_CONTROL.search(key) or value_fact(key) is not None:
        verdict: tuple[str, str | None] = ("<key>", _UNSAFE_KEY)
    else:
        verdict = (key, key_fact(key))
    if len(_KEY_VERDICTS) > 4096:
        _KEY_VERDICTS.clear()
    _KEY_VERDICTS[key] = verdict
    return verdict


_KEY_VERDICTS: dict[object, tuple[str, str | None]] = {}


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
            if local or len(item) >= _TOKEN_WORD or not item.isalnum():
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
