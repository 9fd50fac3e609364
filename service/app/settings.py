"""The store's setup and settings a front end reads or changes: a new store, the projects, the
alias table (the preset verbs), the token estimate, and the Superself import."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from service.core.commands.config import DEFAULT_ALIASES, AliasRow
from service.core.events.events import CLAIM_STATES, EXPOSURES

if TYPE_CHECKING:
    from service.app.workspace import Workspace

__all__ = ["CLAIM_STATES", "DEFAULT_ALIASES", "EXPOSURES", "AliasRow"]  # what the CLI's flags offer


class Created(msgspec.Struct, frozen=True):
    """`self init`: where the new store is."""

    workspace: str


def init_store(given: str | None) -> Created:
    """Create a workspace store at `given` (else SELF_WORKSPACE, else here)."""
    from service.adapters.store import Store
    from service.app.locate import store_root

    return Created(str(Store.init(store_root(given, default=".")).root))


class ProjectRow(msgspec.Struct, frozen=True):
    slug: str
    description: str | None
    archived: bool
    added: str


def projects(ws: Workspace) -> list[ProjectRow]:
    return msgspec.convert(ws.projects(), list[ProjectRow])


class AliasLine(msgspec.Struct, frozen=True):
    """One verb of the merged alias table; `edited` when it is not the default row."""

    verb: str
    label: str
    exposure: str
    priority: int | None
    edited: bool


def aliases(ws: Workspace) -> list[AliasLine]:
    return msgspec.convert(ws.aliases(), list[AliasLine])


def edit_alias(
    ws: Workspace,
    action: str,
    verb: str | None,
    label: str | None,
    exposure: str | None,
    priority: int | None,
) -> list[AliasLine]:
    """Set, add or restore the row of `verb`; the merged table after."""
    from service.core.errors import Invalid

    if verb is None:
        raise Invalid(f"an alias {action} needs a verb", code="missing-value", field="verb")
    ws.edit_alias(action, verb, label, exposure, priority)
    return aliases(ws)


def alias_table(ws: Workspace) -> dict[str, AliasRow]:
    return ws.config().alias_table()


def records_ledger(label: str) -> bool:
    """Whether records under `label` are ledger records (claims, decisions, questions, …)."""
    from service.core.fold.state import kind_of

    return kind_of((label,)) is not None


class Tokens(msgspec.Struct, frozen=True):
    """The token estimate caps and budgets are measured with."""

    tokens_per_char: float
    full_tokens: int
    index_tokens: int
    context_budget: int


def tokens(ws: Workspace, per_char: float | None) -> Tokens:
    """The estimate, after setting it to `per_char` when given."""
    return msgspec.convert(ws.tokens(per_char), Tokens)


def sanitize_rules() -> str:
    """What the record refuses to hold (`self help sanitize`)."""
    from service.core.gates.sanitize import RULES

    return RULES


class SuperselfImport(msgspec.Struct, frozen=True):
    """`self admin import superself`: events imported per project, and the lines of each
    project's log that are not events (line number, why)."""

    projects: dict[str, int]
    skipped_lines: dict[str, list[tuple[int, str]]]


def import_superself(ws: Workspace, path: str) -> SuperselfImport:
    """Import a Superself store, every event kept: events per project, lines skipped."""
    return msgspec.convert(ws.import_superself(Path(path)), SuperselfImport)
