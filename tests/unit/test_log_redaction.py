"""The service's log lines hold no secret: the redacting processor over every value, the
masks it uses (`secret_formats.mask_secrets`), the request id a client may choose, and the
JSON line the request logger writes."""

from __future__ import annotations

import io
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.core.gates.secret_formats import mask_secrets
from service.server.api import logs
from service.server.api.config import Logging

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
TOKEN = "shb_" + "a1B2c3D4e5" * 4 + "xyz"  # the shape `self admin token create` prints
GH_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0" * 2


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"Authorization: Bearer {TOKEN}", "Authorization: ***"),
        ("authorization=Basic dXNlcjpwYXNzd29yZA== rest", "authorization=*** rest"),
        (f'{{"authorization": "Bearer {TOKEN}"}}', '{"authorization": "***"}'),
        (f"bearer {TOKEN}", "bearer ***"),
        (f"https://ann:{TOKEN}@git.example/x.git", "https://***@git.example/x.git"),
        (f"https://{GH_TOKEN}@github.com/o/r", "https://***@github.com/o/r"),
        (f"/api/v1/x?q={TOKEN}&page=2", "/api/v1/x?q=***&page=2"),
        (f"token {GH_TOKEN}.", "token ***."),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- done", "*** done"),
        ("GET /api/v1/workspaces/acme/projects 200", "GET /api/v1/workspaces/acme/projects 200"),
        ("ssh://git@example.org/x", "ssh://***@example.org/x"),
    ],
)
def test_mask_secrets_masks_every_shape(text: str, shown: str) -> None:
    assert mask_secrets(text) == shown


@given(
    st.text(max_size=40),
    st.text(alphabet=BASE62, min_size=43, max_size=43),
    st.text(max_size=40),
)
def test_no_selfhub_token_survives_whatever_surrounds_it(before: str, body: str, after: str) -> None:
    secret = "shb_" + body
    assert secret not in mask_secrets(before + secret + after)


def test_the_processor_masks_values_nested_and_by_key_name() -> None:
    event = {
        "event": f"sent Bearer {TOKEN}",
        "route": "/api/v1/workspaces/{ws}/projects",
        "status": 200,
        "duration_ms": 1.5,
        "user": None,
        "token": "anything at all",
        "headers": {"authorization": "Basic abc", "accept": "application/json", "x-api-key": "k"},
        "seen": [f"q={TOKEN}", 3, {"password": "hunter2"}],
        "extra": ValueError(f"bad {TOKEN}"),
    }
    shown = logs.redact(None, "info", event)
    assert shown == {
        "event": "sent Bearer ***",
        "route": "/api/v1/workspaces/{ws}/projects",
        "status": 200,
        "duration_ms": 1.5,
        "user": None,
        "token": "***",
        "headers": {"authorization": "***", "accept": "application/json", "x-api-key": "***"},
        "seen": ["q=***", 3, {"password": "***"}],
        "extra": "bad ***",
    }


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("abc-123", True),
        ("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", True),
        ("req_01J8ZK3V9Q.retry:2", True),
        (TOKEN, False),
        (GH_TOKEN, False),
        ("has space", False),
        ("x" * 129, False),
        ("", False),
        (None, False),
        ("line\nbreak", False),
        ("-leading-dash", False),
    ],
)
def test_a_clients_request_id_is_kept_only_when_plain(given: str | None, kept: bool) -> None:
    chosen = logs.request_id(given)
    assert (chosen == given) is kept
    if not kept:
        assert len(chosen) == 32 and int(chosen, 16) >= 0, "a new id: 128 random bits in hex"


def test_the_request_logger_writes_one_json_line_at_its_level() -> None:
    out = io.StringIO()
    log = logs.logger(Logging(level="info", format="json"), out)
    log.debug("hidden")
    log.info("request", route="/metrics", status=200, note=f"Bearer {TOKEN}")
    (line,) = out.getvalue().splitlines()
    doc = json.loads(line)
    assert doc["event"] == "request" and doc["level"] == "info" and doc["status"] == 200
    assert doc["note"] == "Bearer ***" and doc["timestamp"].endswith("Z")
    assert TOKEN not in out.getvalue()


def test_the_console_format_is_redacted_too() -> None:
    out = io.StringIO()
    logs.logger(Logging(level="warning", format="console"), out).warning("odd", url=f"https://u:{TOKEN}@h")
    assert "odd" in out.getvalue() and "https://***@h" in out.getvalue() and TOKEN not in out.getvalue()


def test_uvicorns_records_are_rendered_and_redacted_as_the_request_lines() -> None:
    """The formatter `self serve` gives uvicorn's loggers: a traceback's secrets masked too."""
    import logging
    import sys

    config = logs.uvicorn_config(Logging())
    spec = dict(config["formatters"]["structured"])
    formatter = spec.pop("()")(**spec)
    try:
        raise ValueError(f"could not use Authorization: Bearer {TOKEN}")
    except ValueError:
        record = logging.LogRecord(
            "uvicorn.error", logging.ERROR, __file__, 1, "failed for %s", (TOKEN,), sys.exc_info()
        )
    doc = json.loads(formatter.format(record))
    assert doc["event"] == "failed for ***" and doc["level"] == "error" and doc["logger"] == "uvicorn.error"
    assert "ValueError: could not use Authorization: ***" in doc["exception"]
    assert TOKEN not in json.dumps(doc)
    assert {name: row["level"] for name, row in config["loggers"].items()} == {
        "uvicorn": 30,
        "uvicorn.error": 30,
        "uvicorn.access": 30,
    }
