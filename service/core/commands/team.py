"""Who may do what on a team service: roles, the actions each allows, and the names of
workspaces and users held in the service's data directory.

A role is granted per workspace (through an API token bound to one workspace). The roles
are ordered: each allows everything the one below it does, and more.
"""

from __future__ import annotations

import functools
from typing import Literal, get_args

from service.core.commands.commands import SLUG
from service.core.errors import Invalid, Refused
from service.core.events.events import SLUG_RULE

Role = Literal["reader", "writer", "admin"]
Action = Literal["read", "search", "stream", "append", "command", "tokens"]

ROLES: tuple[Role, ...] = get_args(Role)
ACTIONS: tuple[Action, ...] = get_args(Action)

# What each role adds to the one below it.
_ADDS: dict[Role, frozenset[Action]] = {
    "reader": frozenset({"read", "search", "stream"}),  # state, context, search, the log as it grows
    "writer": frozenset({"append", "command"}),  # events and record verbs
    "admin": frozenset({"tokens"}),  # create, list and revoke the workspace's tokens
}


@functools.cache
def allowed(role: Role) -> frozenset[Action]:
    """Every action `role` allows on the workspace it is granted for."""
    rank = ROLES.index(role)
    return frozenset().union(*(_ADDS[r] for r in ROLES[: rank + 1]))


def allows(role: Role, action: Action) -> bool:
    return action in allowed(role)


def check(role: Role, action: Action) -> None:
    """Refused unless `role` allows `action`; the refusal names the role that would."""
    if not allows(role, action):
        needed = next(r for r in ROLES if allows(r, action))
        raise Refused(f"a {role} may not {action} on this workspace; it takes the {needed} role")


def role_of(text: str) -> Role:
    """The role named `text`; Invalid for anything else."""
    for role in ROLES:
        if text == role:
            return role
    raise Invalid(f"{text!r} is not a role: use one of {', '.join(ROLES)}")


# Workspace and user names become directory names and appear in logs, so they are kept to
# the project slug's shape: no dots, slashes, spaces or leading dash, hence no path tricks.


def valid_name(kind: Literal["workspace", "user"], name: str) -> str:
    """`name` if it is a valid workspace or user name, else Invalid saying the rule."""
    if not SLUG.fullmatch(name):
        raise Invalid(f"{name!r} is not a valid {kind} name: use {SLUG_RULE}")
    return name
