"""Workspace settings (`workspace.json`): retention caps, tokens per character, aliases."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.core.events.events import EXPOSURES, Exposure


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
    "claim": AliasRow("claim", "index", 50),
    "question": AliasRow("question", "index", 45),
    "idea": AliasRow("idea", "search"),
    "roadmap": AliasRow("roadmap", "index"),
    "work": AliasRow("work", "search"),
}


CONTEXT_BUDGET = 3000  # tokens the agent render of context keeps to, unless the workspace sets another
TOKENS_PER_CHAR = 0.25  # the token estimate's rate, unless the workspace measured its own (`self tokens`)


class Caps(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Retention caps per scope, in context tokens."""

    full_tokens: int = 1000
    index_tokens: int = 12000


STORE_FORMAT = 1  # the store's layout this release reads and writes (service/adapters/store/layout.py)


class WorkspaceConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, omit_defaults=True):
    format: int = STORE_FORMAT  # the store's format; absent in every store of format 1
    caps: Caps = Caps()
    tokens_per_char: float = TOKENS_PER_CHAR
    context_budget: int = CONTEXT_BUDGET
    aliases: dict[str, AliasRow] = msgspec.field(default_factory=dict)
    removed_aliases: tuple[str, ...] = ()

    def alias_table(self) -> dict[str, AliasRow]:
        """Built-in rows overridden and extended by the user's rows."""
        table = {k: v for k, v in DEFAULT_ALIASES.items() if k not in self.removed_aliases}
        table.update(self.aliases)
        return table


def check_settings(config: WorkspaceConfig, local: Sequence[str] = ()) -> None:
    """Refuse (Unsanitary) settings with a machine-local or secret fact in any string (an
    alias verb, a label, anything added later): workspace.json is committed and synced like
    the logs, so it passes the same gate before it is written."""
    from service.core.gates.sanitize import check_strings

    check_strings(msgspec.to_builtins(config), "workspace.json", local=local)


def edit_alias(
    config: WorkspaceConfig,
    action: str,
    verb: str,
    label: str | None,
    exposure: str | None,
    priority: int | None,
) -> WorkspaceConfig:
    """The config with one alias row set, added or restored to its built-in default."""
    from service.core.errors import Invalid

    table = config.alias_table()
    user = dict(config.aliases)
    removed = tuple(v for v in config.removed_aliases if v != verb)
    if action == "restore":
        if verb not in DEFAULT_ALIASES:
            raise Invalid(f"{verb!r} has no built-in row to restore; built-ins: {', '.join(DEFAULT_ALIASES)}")
        user.pop(verb, None)
    elif action in ("set", "add"):
        if action == "set" and verb not in table:
            raise Invalid(f"no alias {verb!r} to set", code="not-found", field="verb", verb=verb)
        if action == "add" and verb in table:
            raise Invalid(f"alias {verb!r} exists", code="exists", field="verb", verb=verb)
        if verb not in DEFAULT_ALIASES and (not verb.isidentifier() or verb in RESERVED_VERBS):
            raise Invalid(f"{verb!r} cannot be a verb (it must be a word that is not a built-in command)")
        base = table.get(verb) or AliasRow(label or verb, "search")
        exposure = exposure or base.exposure
        if exposure not in EXPOSURES:
            raise Invalid(f"exposure {exposure!r} is not one of {', '.join(EXPOSURES)}")
        user[verb] = AliasRow(
            label or base.label, exposure, priority if priority is not None else base.priority
        )
    else:
        raise Invalid(f"no alias action {action!r}: the actions are set, add and restore", field="action")
    return msgspec.structs.replace(config, aliases=user, removed_aliases=removed)


RESERVED_VERBS = frozenset(
    {
        "init",
        "project",
        "state",
        "context",
        "status",
        "search",
        "log",
        "fold",
        "alias",
        "tokens",
        "import",
        "report",
        "review",
        "gate",
        "export",
        "work",
        "serve",
        "sync",
        "remote",
        "clone",
        "help",
    }
)
