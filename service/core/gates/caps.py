"""The retention-cap gate: full and index tiers per scope, measured in context tokens."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from service.core.commands.config import WorkspaceConfig
from service.core.errors import Refused
from service.core.events.events import EXPOSURES, Exposure
from service.core.fold.state import Entity
from service.core.projections import render
from service.core.projections.tokens import ESTIMATE_NOTE


class CapExceeded(Refused):
    """Adding or placing past a cap, with no demotion naming what makes room."""

    default_code = "cap-exceeded"


def rank(exposure: Exposure) -> int:
    return EXPOSURES.index(exposure)


def one_tier_down(exposure: Exposure) -> Exposure:
    return EXPOSURES[min(rank(exposure) + 1, len(EXPOSURES) - 1)]


def over(tier: Exposure, after: int, before: int, config: WorkspaceConfig) -> bool:
    """A tier past its cap: it holds more than its cap and more than it did before."""
    limit = config.caps.full_tokens if tier == "full" else config.caps.index_tokens
    return after > limit and after > before


def usage(entities: Iterable[Entity], scope: str, per_char: float) -> dict[str, int]:
    """Tokens the live records of `scope` spend at full and at index exposure."""
    spent = {"full": 0, "index": 0}
    for e in entities:
        if e.live and e.scope == scope and e.exposure in spent:
            spent[e.exposure] += render.cost(e, e.exposure, per_char)
    return spent


def reaches(incoming: Sequence[Entity], demoted: Sequence[Entity]) -> bool:
    """Whether a change can grow a capped tier, so `check` need read the live records:
    something enters the full or index tier, or is demoted into one."""
    return bool(demoted) or any(e.exposure in ("full", "index") for e in incoming)


def check(
    live: Sequence[Entity],
    incoming: Sequence[Entity],
    replaced: Sequence[Entity],
    demoted: Sequence[Entity],
    config: WorkspaceConfig,
) -> None:
    """Refuse when `incoming` would push a tier of its scope past its cap.

    `replaced` leave (superseded); `demoted` move one tier down to make room.
    """
    per_char = config.tokens_per_char
    limits = {"full": config.caps.full_tokens, "index": config.caps.index_tokens}
    leaving = {e.id for e in replaced} | {e.id for e in demoted}
    for scope in sorted({e.scope for e in incoming}):
        staying = [e for e in live if e.id not in leaving]
        spent = usage(staying, scope, per_char)
        for e in demoted:
            lower = one_tier_down(e.exposure)
            if e.scope == scope and lower in spent:
                spent[lower] += render.cost(e, lower, per_char)
        before = dict(spent)
        for e in incoming:
            if e.scope == scope and e.exposure in spent:
                spent[e.exposure] += render.cost(e, e.exposure, per_char)
        for tier in ("full", "index"):
            if over(tier, spent[tier], before[tier], config):
                raise CapExceeded(
                    f"the {tier} tier of {scope} scope would hold {spent[tier]} tokens, over its "
                    f"cap of {limits[tier]} (it holds {before[tier]} now); pass {{demote}} <id> "
                    f"to move a record one tier down, or raise caps.{tier}_tokens in "
                    f"workspace.json ({ESTIMATE_NOTE})",
                    field="demote",
                )
