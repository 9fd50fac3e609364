"""The shapes secrets take in text: vendor token formats, key blocks, headers, assignments,
and long random-looking runs. The sanitize gate refuses them; the sync adapter masks them in
what it prints (`mask_tokens`) and refuses remote URLs that hold one (`token_fact`).

Speed: `secret_fact` runs on every string of every append, so each pattern is gated by a
substring test (`"=" in text`, C speed) and patterns begin with a literal where they can,
which lets the regex engine skip ahead instead of trying every position. Every pattern runs
in time linear in its input (checked on 40 kB adversarial strings).
"""

from __future__ import annotations

import functools
import math
import re
from itertools import pairwise

# Every token is one word of at least 20 characters; only such words are searched. The
# patterns are one flat alternation of literal-led branches, which the regex engine scans
# quickly; the kind is found by trying them one by one only after the alternation matched.
TOKEN_WORD = 20
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
    ("holds a Hugging Face token", r"hf_[A-Za-z0-9]{30,}"),
    ("holds a Docker Hub token", r"dckr_pat_[A-Za-z0-9_\-]{20,}"),
    ("holds a Notion token", r"secret_[A-Za-z0-9]{40,}|ntn_[A-Za-z0-9]{40,}"),
    ("holds a DigitalOcean token", r"do[opr]_v1_[a-f0-9]{64}"),
    ("holds a Shopify token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("holds a Linear API key", r"lin_api_[A-Za-z0-9]{32,}"),
    ("holds a Groq API key", r"gsk_[A-Za-z0-9]{40,}"),
    ("holds a Grafana token", r"gl(?:sa|c)_[A-Za-z0-9_\-=+/]{32,}"),
    ("holds a SendGrid API key", r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    ("holds a Vault token", r"hv[sb]\.[A-Za-z0-9_\-]{24,}"),
    ("holds a selfhub API token", r"shb_[A-Za-z0-9]{40,}"),  # service/adapters/auth/tokens.py
    ("holds a JSON web token", r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
)
_TOKENS = re.compile("|".join(pattern for _, pattern in _TOKEN_PATTERNS))


@functools.cache
def _token_kinds() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Each token pattern alone, compiled when `_TOKENS` first matches (rarely, if ever)."""
    return tuple((kind, re.compile(pattern)) for kind, pattern in _TOKEN_PATTERNS)


PEM_KIND = "holds a private key block"
_PEM = re.compile(r"-----BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----")
BEARER_KIND = "holds a bearer token"
_BEARER = re.compile(r"[Bb]earer[ \t]+(?=[A-Za-z\-._~+/]*[0-9])[A-Za-z0-9\-._~+/]{12,}")
AUTH_HEADER_KIND = "holds an authorization header"
_AUTH_HEADER = re.compile(r"[Aa]uthorization\s*:\s*(?i:bearer|basic|token|digest)\s+\S")
URL_CREDENTIALS_KIND = "holds credentials in a URL"
_URL_CREDENTIALS = re.compile(r"://(?:[^\s/@:]*:[^\s/@]+|[A-Za-z0-9_\-.~%]{20,})@")

ENV_KIND = "holds an environment dump"
_ENV_WELL_KNOWN = re.compile(
    r"(?<![A-Za-z0-9_$])(?:PATH|HOME|USER|LOGNAME|SHELL|PWD|OLDPWD|HOSTNAME|TMPDIR"
    r"|USERPROFILE|SSH_AUTH_SOCK)="
)
_ENV_LINE = r"[ \t]*(?:export[ \t]+)?[A-Z_][A-Z0-9_]*=[^\n]*"
# Three or more KEY=value lines (blank lines between them allowed) read as a dump.
_ENV_LINES = re.compile(rf"(?m)^{_ENV_LINE}(?:\n[ \t]*)*\n{_ENV_LINE}(?:\n[ \t]*)*\n{_ENV_LINE}")
ASSIGNMENT_KIND = "holds a credential assignment"
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

ENTROPY_KIND = "holds a long high-entropy string (a likely secret)"
_RUN = re.compile(r"[A-Za-z0-9+/_\-]{32,}")
_HEX = re.compile(r"[0-9a-fA-F]{32,}")
_HEX_DIGIT = re.compile(r"[0-9]")
_HEX_LETTER = re.compile(r"[a-fA-F]")
_SAMPLE = 1024  # characters of a run its randomness is judged on
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# An id names its kind before its random part: `session_01RR19nj…`, `msg_01…`, `evt-…`,
# `cli_session_01…`. Only at the start of a run or of a path segment: inside a random run a
# lowercase stretch before a `_` is chance, not a kind.
_PREFIXED_ID = re.compile(
    r"(?<![A-Za-z0-9_\-+])([a-z][a-z0-9]{1,23}(?:[_\-][a-z][a-z0-9]{1,23}){0,2})[_\-][A-Za-z0-9]{8,}"
)
# …unless the prefix says secret: `key_…`, `api-…`, `token_…` are judged as random runs.
_SECRET_PREFIX = re.compile(r"pass|secret|token|key|cred|auth|api|pwd")
_SECRET_PREFIXES = frozenset({"pat", "pw", "sk", "pk", "rk"})
_COMMIT_URL = re.compile(r"/(?:commit|commits|tree|blob)/[0-9a-f]{7,64}(?![0-9a-f])")
ENTROPY_BITS = 3.5
HEX_ENTROPY_BITS = 3.0  # random hex of 32 characters: 3.5 to 4


def token_fact(text: str) -> str | None:
    """The kind of vendor token or web token `text` holds anywhere, or None."""
    if len(text) < TOKEN_WORD:
        return None
    for word in text.split():
        if len(word) >= TOKEN_WORD:
            kind = word_token_fact(word)
            if kind is not None:
                return kind
    return None


def word_token_fact(word: str) -> str | None:
    """`token_fact` of one word (no whitespace) of TOKEN_WORD characters or more."""
    if _TOKENS.search(word):
        return next(kind for kind, pattern in _token_kinds() if pattern.search(word))
    return None


def mask_tokens(text: str) -> str:
    """`text` with every vendor token and web token replaced by ***."""
    return _TOKENS.sub("***", text) if len(text) >= TOKEN_WORD else text


_Spans = tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]


@functools.cache
def _spans() -> _Spans:
    """The same shapes as whole spans, to mask rather than detect: a key block to its end, a
    bearer token, an authorization header's credentials, a URL's user info (compiled on first
    use: only a process that writes logs masks)."""
    return (
        re.compile(
            r"-----BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*-----|\Z)", re.S
        ),
        re.compile(r"([Bb]earer[ \t]+)[A-Za-z0-9\-._~+/]+=*"),
        re.compile(r"((?i:authorization)['\"]?\s*[:=]\s*['\"]?)[^\s'\",;]+(?:[ \t]+[^\s'\",;]+)?"),
        re.compile(r"(://)[^\s/@]+@"),
    )


def mask_secrets(text: str) -> str:
    """`text` with every token `mask_tokens` knows, key block, bearer token, authorization
    header's credentials and URL user info replaced by *** (for what is written to logs)."""
    pem, bearer, auth, userinfo = _spans()
    if "-----BEGIN" in text:
        text = pem.sub("***", text)
    if "earer" in text:
        text = bearer.sub(r"\1***", text)
    if "uthorization" in text or "UTHORIZATION" in text:
        text = auth.sub(r"\1***", text)
    if "@" in text and "://" in text:
        text = userinfo.sub(r"\1***@", text)
    return mask_tokens(text)


def secret_fact(text: str) -> str | None:
    """A private key block, a bearer token, an authorization header or credentials in a URL
    that `text` holds, or None (vendor tokens: `token_fact`)."""
    if "-----BEGIN" in text and _PEM.search(text):
        return PEM_KIND
    if "earer" in text and _BEARER.search(text):
        return BEARER_KIND
    if "uthorization" in text and _AUTH_HEADER.search(text):
        return AUTH_HEADER_KIND
    if "@" in text and "://" in text and _URL_CREDENTIALS.search(text):
        return URL_CREDENTIALS_KIND
    return None


def assignment_fact(text: str) -> str | None:
    """An environment dump or a credential assignment (`GITHUB_TOKEN=…`), or None."""
    if "=" in text and (_ENV_WELL_KNOWN.search(text) or ("\n" in text and _ENV_LINES.search(text))):
        return ENV_KIND
    if not _SECRET_HINT.search(text.lower()):
        return None
    if "=" in text and _ASSIGN_EQUALS.search(text):
        return ASSIGNMENT_KIND
    if ":" in text and _ASSIGN_COLON.search(text):
        return ASSIGNMENT_KIND
    return None


def random_run_fact(text: str, longest: int) -> str | None:
    """A long run that reads as random and is no prefixed id, or None (see `_secret_run`)."""
    if longest >= 32 and _secret_run(text):
        return ENTROPY_KIND
    return None


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


def _unprefixed(match: re.Match[str]) -> str:
    prefix = match.group(1)
    if prefix in _SECRET_PREFIXES or _SECRET_PREFIX.search(prefix):
        return match.group()
    return "-"


def _secret_run(text: str) -> bool:
    """Whether `text` holds a long base64-like run that reads as random, or a long run of
    hex digits (digits and letters mixed, not a repeated pattern). UUIDs and ids that name
    their kind first (`session_01RR19nj3Epadxj44kZZsgTF`) are ids, not secrets."""
    if "/commit" in text or "/tree/" in text or "/blob/" in text:
        text = _COMMIT_URL.sub("/commit/", text)
    for match in _RUN.finditer(text):
        run = _PREFIXED_ID.sub(_unprefixed, _UUID.sub("-", match.group()))
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
