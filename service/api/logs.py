"""The service's logs: one JSON line (or a console line) on stderr per request, and uvicorn's
own records through the same processors. Secrets never reach a line: every string a line
holds passes `redact` (the model's secret shapes: `shb_` and vendor tokens, bearer tokens,
authorization headers, URL credentials, key blocks), and a field whose name says credential
(`token`, `authorization`, `password`…: `sanitize_keys`) is written as ***. A request's line
names its route template, never its path or query.

No global structlog configuration: each app has its own logger, so tests can read one.
"""

from __future__ import annotations

import re
import sys
import uuid
from collections.abc import Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, TextIO

import structlog

if TYPE_CHECKING:
    from structlog.typing import Processor

    from service.api.config import Logging

MASK = "***"
CREDENTIAL = "names a credential"  # service/model/sanitize_keys.py's kind
_REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:\-]{0,127}")
LEVELS = {"debug": 10, "info": 20, "warning": 30, "error": 40}


def redact(_: object, __: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """The structlog processor that masks secrets in every value (nested ones too)."""
    return {key: _masked(key, value) for key, value in event.items()}


def _masked(key: object, value: Any) -> Any:
    from service.model.sanitize_keys import key_fact
    from service.model.secret_formats import mask_secrets

    if isinstance(key, str) and value is not None and key_fact(key) == CREDENTIAL:
        return MASK
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, Mapping):
        return {k: _masked(k, v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_masked(None, v) for v in value]
    if isinstance(value, int | float | bool) or value is None:
        return value
    return mask_secrets(str(value))


def request_id(given: str | None) -> str:
    """The client's `X-Request-Id` when it is a plain id (no token, at most 128 characters),
    else a new one."""
    from service.model.secret_formats import mask_secrets

    if given and _REQUEST_ID.fullmatch(given) and mask_secrets(given) == given:
        return given
    return uuid.uuid4().hex


def _renderer(form: str) -> Processor:
    if form == "json":
        return structlog.processors.JSONRenderer()
    return structlog.dev.ConsoleRenderer(colors=False)


_FIELDS: list[Processor] = [
    structlog.contextvars.merge_contextvars,  # the request id, in whatever a request logs
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    structlog.processors.format_exc_info,
]


def logger(config: Logging, stream: TextIO | None = None) -> Any:
    """The app's logger: lines at `config.level` and above, to `stream` (stderr)."""
    return structlog.wrap_logger(
        structlog.WriteLogger(stream or sys.stderr),
        processors=[*_FIELDS, redact, _renderer(config.format)],
        wrapper_class=structlog.make_filtering_bound_logger(LEVELS[config.level]),
        cache_logger_on_first_use=True,
    )


def uvicorn_config(config: Logging) -> dict[str, Any]:
    """A `logging.config.dictConfig` for uvicorn: its records (startup failures, errors the
    app logs) rendered and redacted as the request lines are, on stderr."""
    formatter = {
        "()": structlog.stdlib.ProcessorFormatter,
        "foreign_pre_chain": [structlog.stdlib.add_logger_name, *_FIELDS],
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
