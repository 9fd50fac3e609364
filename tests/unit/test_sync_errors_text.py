"""How a git protocol error's text is read: HTTP statuses are whole numbers, never part of a
port or a pool's name."""

from __future__ import annotations

import pytest

from service.adapters.sync.transport import protocol_failure

REFUSED = (
    "WatchedPool(host='127.0.0.1', port={port}): Max retries exceeded with url: /ws.git/info/refs "
    "(Caused by NewConnectionError(\"HTTPConnection(host='127.0.0.1', port={port}): Failed to "
    'establish a new connection: [Errno 111] Connection refused"))'
)


@pytest.mark.parametrize("port", [46403, 40140, 44041, 34040, 54404])
def test_a_port_holding_401_403_or_404_is_no_status(port: int) -> None:
    assert protocol_failure(REFUSED.format(port=port)) is None


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("unexpected http resp 401 for http://h/ws.git/info/refs", "auth"),
        ("unexpected http resp 403 for http://h/ws.git/info/refs", "auth"),
        ("Authentication failed for 'http://h/ws.git/'", "auth"),
        ("unexpected http resp 404 for http://h/ws.git/info/refs", "missing"),
        ("repository not exported", "missing"),
        ("unexpected http resp 500 for http://h/ws.git/info/refs", None),
    ],
)
def test_statuses_and_phrases_are_read(text: str, kind: str | None) -> None:
    assert protocol_failure(text) == kind
