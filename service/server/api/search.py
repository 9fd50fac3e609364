"""`GET /api/v1/search`: the live records of every project of every workspace the caller may
read, matched and ranked as `self search` ranks them, the named project's records first.

The index (`app.state["search"]`, a `SharedIndex`) finds and ranks; each workspace searched is
first brought up to its store's head, so a write by any path (the service, a CLI writing
into DATA) is found at once. A hit's `record` is the row `self search --json` prints for it:
short ids are the shortest unique prefixes among every match, as the CLI's are among its
rows, and a ledger record's row carries its derived keys read from its log's state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import msgspec
from litestar import Request, Response, get

from service.adapters.index.query import DEFAULT_LIMIT
from service.core.events.events import EXPOSURES, SLUG_RULE
from service.server.api import bodies, guard, openapi
from service.server.api.errors import BadParameter, Forbidden

if TYPE_CHECKING:
    from service.adapters.data.workspaces import Data
    from service.adapters.index import Found
    from service.adapters.index.query import Page
    from service.adapters.index.shared import SharedIndex
    from service.core.fold.state import State

# the folded state of one log (workspace, log): where a ledger record's derived keys come from
StateOf = Callable[[str, str], "State"]

Row = dict[str, Any]


class SearchHit(msgspec.Struct, frozen=True):
    """One match: where it is, its place in the answer (1 first) and its `self search` row
    (the row as the model builds it; `bodies.SearchHit` documents it key for key)."""

    workspace: str
    rank: int
    record: Row


class SearchAnswer(msgspec.Struct, frozen=True):
    """The first `limit` of `matched` records, best first, over `workspaces`."""

    query: str
    project: str | None
    workspaces: list[str]
    matched: int
    hits: list[SearchHit]
    hidden: int = 0


class Asked(msgspec.Struct, frozen=True):
    """A search's parameters, checked: `exposure` None is every exposure (`all`); `hidden`:
    the default search, which counts the matches context shows that it leaves out."""

    q: str
    project: str | None
    limit: int
    exposure: str | None
    hidden: bool = False


def asked(q: str, project: str | None, limit: int, all_: bool, exposure: str | None) -> Asked:
    """The parameters as `self search` reads its flags; BadParameter naming the first one
    that is missing or out of its range."""
    from service.adapters.index.errors import QueryTooLong
    from service.adapters.index.query import MAX_LIMIT, check_query
    from service.core.commands.commands import valid_slug
    from service.core.errors import Invalid

    try:
        terms = check_query(q)
    except QueryTooLong as exc:
        raise BadParameter("q", str(exc)) from None
    if not terms:
        raise BadParameter("q", "required: give one or more words to search for (?q=deploy)")
    if not 1 <= limit <= MAX_LIMIT:
        raise BadParameter("limit", f"{limit} is out of range: ask for 1 to {MAX_LIMIT} results")
    if exposure is not None and exposure not in EXPOSURES:
        raise BadParameter("exposure", f"{exposure!r} is not one of {', '.join(EXPOSURES)}")
    if project is not None:
        try:
            valid_slug(project)
        except Invalid:
            raise BadParameter("project", f"{project!r} cannot name a project: {SLUG_RULE}") from None
    # as `self search`: an exposure named wins; else --all is every one; else only `search`
    chosen = exposure if exposure is not None else None if all_ else "search"
    return Asked(q, project, limit, chosen, hidden=exposure is None and not all_)


def readable(data: Data, request: Request[Any, Any, Any], wanted: str | None) -> list[str]:
    """The workspaces the caller's token lets it search (one a token today; every one of a
    grant of several), or only `wanted` among them: Forbidden when it is not, whether or not
    it exists (the same answer as every workspace route)."""
    from service.core.commands.team import allows

    given = guard.grant(data, request)
    granted = [(given.workspace, given.role)]
    mine = [ws for ws, role in granted if allows(role, "search") and data.has(ws)]
    if wanted is None:
        return mine
    if wanted not in mine:
        raise Forbidden()
    return [wanted]


def answer(index: SharedIndex, workspaces: list[str], ask: Asked, state_of: StateOf) -> SearchAnswer:
    """The search after the caller is authorized: each workspace brought up to its head, then
    the ranked matches with their rows."""
    index.fresh(workspaces)
    found = index.page(ask.q, ask.project, workspaces, ask.exposure, ask.limit, ask.hidden)
    return SearchAnswer(ask.q, ask.project, workspaces, found.matched, hits(found, state_of), found.hidden)


def hits(found: Page, state_of: StateOf) -> list[SearchHit]:
    """The answer's hits: the first matches' rows, short ids among every match."""
    from service.core.projections import views

    shorts = found.shorts
    top = found.top
    extras = dict(_ledger_extras(top, state_of))
    rows = [views.entity_row(f.entity, shorts[f.entity.id], extras.get(_key(f))) for f in top]
    return [SearchHit(f.workspace, rank, row) for rank, (f, row) in enumerate(zip(top, rows, strict=True), 1)]


def _key(f: Found) -> tuple[str, str, str]:
    return f.workspace, f.log, f.entity.id


def _ledger_extras(top: list[Found], state_of: StateOf) -> Iterator[tuple[tuple[str, str, str], Row]]:
    """The keys a ledger record adds to its row, derived from its log's whole state: only the
    logs holding a claim, decision or question among `top` are read."""
    from service.core.fold.state import kind_of
    from service.core.projections import views

    logs: dict[tuple[str, str], list[str]] = {}
    for f in top:
        if kind_of(f.entity.labels) is not None:
            logs.setdefault((f.workspace, f.log), []).append(f.entity.id)
    for (workspace, log), ids in sorted(logs.items()):
        state = state_of(workspace, log)
        for record_id, extra in views.ledger_extras(state, ids).items():
            yield (workspace, log, record_id), extra


def live_states(request: Request[Any, Any, Any], user: str) -> StateOf:
    """A log's state as the service holds it in memory (its hub), caught up with the store."""
    from service.server.api.routes import hub_of, origin_of
    from service.server.live.view import reading

    def state_of(workspace: str, log: str) -> State:
        with reading(hub_of(request).workspace(workspace), None, origin_of(user)) as view:
            return view.state(log)

    return state_of


@get(
    "/api/v1/search",
    sync_to_thread=True,
    **openapi.protected("search"),
    responses=openapi.answers(bodies.SearchAnswer, 400, 401, 403),
)
def search(
    request: Request[Any, Any, Any],
    q: str = "",
    project: str | None = None,
    limit: int = DEFAULT_LIMIT,
    all: bool = False,
    exposure: str | None = None,
    workspace: str | None = None,
) -> Response[bytes]:
    """Live records matching `q` (any word, case-insensitive) in every workspace the token
    opens (or only `workspace`), `project`'s first; by default those context leaves out (as
    `self search`), every one with `all=1`, one exposure with `exposure=`. At most `limit`
    (1 to 200, default 20) of `matched`; `hidden` counts the matches the default search left
    out because context shows them (`all=1` finds them), up to 1,000."""
    data: Data = request.app.state["data"]
    workspaces = readable(data, request, workspace)
    ask = asked(q, project, limit, all, exposure)
    user = guard.grant(data, request).user
    body = answer(request.app.state["search"], workspaces, ask, live_states(request, user))
    return Response(msgspec.json.encode(body) + b"\n", media_type="application/json")


SEARCH_ROUTES = [search]
