"""Workspace settings (`workspace.json`): retention caps, tokens per character, aliases."""

from __future__ import annotations

import msgspec

from service.model.events import Exposure


class AliasRow(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A preset verb: the label it records and the placement it defaults to."""

    label: str
    exposure: Exposure
    priority: int | None = None


DEFAULT_ALIASES: dict[str, AliasRow] = {
    "goal": AliasRow("goal", "full", 0),
    "objective": AliasRow("objective", "full", 10),
    "milestone": AliasRow("milestone", "index", 20),
    "convention": AliasRow("convention", "full", 30),
    "decide": AliasRow("decision", "index", 40),
    "idea": AliasRow("idea", "search"),
    "roadmap": AliasRow("roadmap", "index"),
    "work": AliasRow("work", "search"),
}


class Caps(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Retention caps per scope, in context tokens."""

    full_tokens: int = 1000
    index_tokens: int = 12000


class WorkspaceConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    caps: Caps = Caps()
    tokens_per_char: float = 0.25
    context_budget: int = 3000
    aliases: dict[str, AliasRow] = msgspec.field(default_factory=dict)
    removed_aliases: tuple[str, ...] = ()

    def alias_table(self) -> dict[str, AliasRow]:
        """Built-in rows overridden and extended by the user's rows."""
        table = {k: v for k, v in DEFAULT_ALIASES.items() if k not in self.removed_aliases}
        table.update(self.aliases)
        return table
