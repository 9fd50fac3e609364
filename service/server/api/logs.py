"""The service's logs: one JSON line (or a console line) on stderr per request, and uvicorn's
own records through the same processors. Secrets never reach a line: every string a line
holds passes `redact` (the model's secret shapes: `shb_` and vendor tokens, bearer tokens,
authorization headers, URL credentials, key blocks), and a field whose name says credential
(`token`, `authorization`, `password`…: `sanitize_keys`) is written as ***. A request's line
names its route template, never its path or query.

No global structlog configuration: each app has its own logger, so tests can read one.
"""

from __future__ import annotations

import itertools
import re
import secrets
import sys
from collections.abc import Mapping, MutableMapping
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TextIO

import msgspec
import structlog

from service.core.gates.sanitize_keys import key_fact
from service.core.gates.secret_formats import mask_secrets

if TYPE_CHECKING:
    from structlog.typing import Processor

    from service.server.api.config import Logging

MASK = "***"
CREDENTIAL = "names a credential"  # service/core/gates/sanitize_keys.py's kind
_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}")
LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}
REQUEST: ContextVar[str | None] = ContextVar("request_id", default=None)  # set by observe.py


def redact(_: object, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The structlog processor that masks secrets in every value (nested ones too)."""
    return {key: _masked(key, value) for key, value in event.items()}


def _masked(key: object, value: Any) -> Any:
    if value is None:
        return None
    if type(key) is str and key_fact(key) == CREDENTIAL:
        return MASK
    kind = type(value)
    if kind is str:
        return _masked_text(value)
    if kind is int or kind is float or kind is bool:
        return value
    if isinstance(value, Mapping):
        return {k: _masked(k, v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(None, v) for v in value]
    return mask_secrets(str(value))


_SEEN: dict[str, str] = {}  # a line's strings repeat (routes, names, methods): masked once


def _masked_text(text: str) -> str:
    if len(text) > 256:
        return mask_secrets(text)
    shown = _SEEN.get(text)
    if shown is None:
        if len(_SEEN) >= 4096:
            _SEEN.clear()
        shown = _SEEN[text] = mask_secrets(text)
    return shown


_PROCESS = secrets.token_hex(8)  # a new id: this process's random part and a count
_COUNT = itertools.count(1)


def request_id(given: str | None) -> str:
    """The client's `X-Request-Id` when it is a plain id (no token, at most 128 characters),
    else a new one (unique across processes, cheaper than 128 random bits a request)."""
    if given and _REQUEST_ID.fullmatch(given) and mask_secrets(given) == given:
        return given
    return f"{_PROCESS}{next(_COUNT):016x}"


def add_request_id(_: object, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The id of the request being answered, in whatever is logged while it is."""
    found = REQUEST.get()
    if found is not None:
        event.setdefault("request_id", found)
    return event


def _json(event: Any, **_: Any) -> str:
    return msgspec.json.encode(event).decode()


def _renderer(form: str) -> Processor:
    if form == "json":
        return structlog.processors.JSONRenderer(serializer=_json)
    return structlog.dev.ConsoleRenderer(colors=False)


_GIVEN: list[Processor] = [add_request_id, structlog.processors.format_exc_info]  # then redact
_ADDED: list[Processor] = [  # values of its own, nothing to mask
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def logger(config: Logging, stream: TextIO | None = None) -> Any:
    """The app's logger: lines at `config.level` and above, to `stream` (stderr)."""
    return structlog.wrap_logger(
        structlog.WriteLogger(stream or sys.stderr),
        processors=[*_GIVEN, redact, *_ADDED, _renderer(config.format)],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[config.level]),
        cache_logger_on_first_use=True,
    )


def uvicorn_config(config: Logging) -> dict[str, Any]:
    """A `logging.config.dictConfig` for uvicorn: its records (startup failures, errors the
    app logs) rendered and redacted as the request lines are, on stderr."""
    formatter = {
        "()": structlog.stdlib.ProcessorFormatter,
        "foreign_pre_chain": [structlog.stdlib.add_logger_name, *_GIVEN, *_ADDED],
        "processors": [
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            redact,
            _renderer(config.format),
        ],
    }
    level = max(LEVELS[config.level], LEVELS["warning"])  # uvicorn's info lines say little
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"structured": formatter},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "formatter": "structured",
                "stream": "ext://sys.stderr",
            }
        },
        "loggers": {
            name: {"handlers": ["stderr"], "level": level, "propagate": False}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access")
        },
    }
