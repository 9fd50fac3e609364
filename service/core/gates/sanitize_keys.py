"""Key names that say a value is a machine-local or secret fact: `pid`, `cwd`, `hostname`,
`env`, `password`, `*_token`, `api_key`, `stdout`… however they are cased or joined
(`processId`, `working_directory`, `envVars`). Ordinary names pass: `branch`, `work`, `code`,
`commit`, `session`, `tokens_per_char`, `key`, `homepage`. Used by the sanitize gate on every
key of an event.
"""

from __future__ import annotations

import re
from itertools import pairwise

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
