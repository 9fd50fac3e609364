"""The team service's role model: which role may do what, and the names DATA accepts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from service.core.commands import team
from service.core.errors import Invalid, Refused


@pytest.mark.parametrize(
    ("role", "actions"),
    [
        ("reader", {"read", "search", "stream"}),
        ("writer", {"read", "search", "stream", "append", "command"}),
        ("admin", {"read", "search", "stream", "append", "command", "tokens"}),
    ],
)
def test_each_role_allows_exactly_its_actions(role: team.Role, actions: set[str]) -> None:
    assert team.allowed(role) == actions
    for action in team.ACTIONS:
        assert team.allows(role, action) == (action in actions)


@given(st.sampled_from(team.ROLES), st.sampled_from(team.ROLES))
def test_a_higher_role_allows_everything_a_lower_one_does(low: team.Role, high: team.Role) -> None:
    if team.ROLES.index(low) <= team.ROLES.index(high):
        assert team.allowed(low) <= team.allowed(high)
    else:
        assert team.allowed(low) > team.allowed(high)


def test_every_action_is_allowed_by_some_role() -> None:
    assert set(team.ACTIONS) == team.allowed("admin")


@pytest.mark.parametrize(
    ("role", "action", "needed"),
    [("reader", "append", "writer"), ("reader", "command", "writer"), ("writer", "tokens", "admin")],
)
def test_a_refusal_names_the_role_that_would_do(role: team.Role, action: team.Action, needed: str) -> None:
    with pytest.raises(Refused, match=f"takes the {needed} role"):
        team.check(role, action)


def test_an_allowed_action_passes() -> None:
    team.check("reader", "search")
    team.check("admin", "tokens")


def test_role_of_names_the_roles_on_a_typo() -> None:
    assert team.role_of("writer") == "writer"
    with pytest.raises(Invalid, match="reader, writer, admin"):
        team.role_of("owner")


@pytest.mark.parametrize("name", ["team", "a", "acme-2", "x" * 63])
def test_valid_names(name: str) -> None:
    assert team.valid_name("workspace", name) == name


@pytest.mark.parametrize(
    "name",
    ["", "..", ".", "a/b", "../etc", "-a", "A", "a b", "a.b", "a\n", "x" * 64, "a\\b", "é"],
)
def test_names_with_path_tricks_are_refused(name: str) -> None:
    with pytest.raises(Invalid, match="valid workspace name"):
        team.valid_name("workspace", name)


@given(st.text(max_size=70))
def test_a_valid_name_is_one_plain_path_component(name: str) -> None:
    try:
        team.valid_name("user", name)
    except Invalid:
        return
    assert name not in (".", "..") and "/" not in name and "\\" not in name
    assert name == name.strip() and not name.startswith("-") and "\x00" not in name
