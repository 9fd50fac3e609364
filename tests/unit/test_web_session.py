"""The web view's session rules without a server: where a sign-in may return to, which forms
count as this service's own, and paths built from hostile parts."""

from __future__ import annotations

from typing import Any

import pytest

from service.server.web import session
from service.server.web.errors import CrossOrigin
from service.server.web.templating import compact, environment, href


class Asked:
    """What `same_origin` reads of a request: its headers."""

    def __init__(self, **headers: str) -> None:
        self.headers = {k.replace("_", "-"): v for k, v in headers.items()}


@pytest.mark.parametrize(
    ("target", "goes"),
    [
        ("/ws/acme/projects/web", "/ws/acme/projects/web"),
        ("/search?q=a", "/search?q=a"),
        ("//elsewhere.example/x", "/"),
        ("https://elsewhere.example/", "/"),
        ("/\\elsewhere.example", "/"),
        ("javascript:alert(1)", "/"),
        ("", "/"),
    ],
)
def test_a_sign_in_returns_only_to_a_page_of_this_service(target: str, goes: str) -> None:
    assert session.local_path(target) == goes


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://127.0.0.1:8765", "host": "127.0.0.1:8765"},
        {"origin": "https://selfhub.example.com", "host": "selfhub.example.com"},
        {"host": "127.0.0.1:8765"},  # no browser sent it
        {"sec_fetch_site": "same-origin", "host": "h"},
    ],
)
def test_a_form_of_this_service_passes(headers: dict[str, str]) -> None:
    session.same_origin(Asked(**headers))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "https://elsewhere.example", "host": "127.0.0.1:8765"},
        {"origin": "null", "host": "127.0.0.1:8765"},
        {"origin": "http://127.0.0.1:9999", "host": "127.0.0.1:8765"},
        {"sec_fetch_site": "cross-site", "host": "h"},
    ],
)
def test_a_form_of_another_site_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(CrossOrigin):
        session.same_origin(Asked(**headers))  # type: ignore[arg-type]


def test_paths_and_values_cannot_carry_markup_or_segments() -> None:
    assert href("ws", "a/b", "c?d#e") == "/ws/a%2Fb/c%3Fd%23e"
    assert compact(["x", 1]) == '["x", 1]' and compact("<b>") == "<b>"
    rendered = (
        environment()
        .from_string("<p>{{ v }}</p><p>{{ w | compact }}</p>")
        .render(v="<script>x</script>", w=["<i>"])
    )
    assert "<script>" not in rendered and "<i>" not in rendered and "&lt;script&gt;" in rendered


def test_every_template_parses() -> None:
    env = environment()
    names: Any = env.list_templates()
    assert {"base.html", "project.html", "record.html", "records.html", "search.html", "signin.html"} <= set(
        names
    )
    for name in names:
        env.get_template(name)
