"""The one module that wires the store adapter to the pure model.

Front ends reach it through the application layer (`service/app`) for writes; reads still
call it directly. Writes run a pure command inside a store transaction; reads fold through
the cache.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from service.adapters.store import local
from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.events import ids
from service.core.events.events import WORKSPACE_LOG, Event, Origin
from service.core.fold.state import Entity, Project, State, shared_with

if TYPE_CHECKING:  # imported where used: the gate reads a state, no command or slice
    from service.adapters.importers.superself import ImportSummary
    from service.app.ports import HotSlice, Quarantined, StorePort
    from service.core.commands.commands import Clock
    from service.core.fold.hotslice import ColdCounts
    from service.core.projections.context import Draft, Filler
    from service.core.projections.overview import OverviewDoc
    from service.core.projections.render import Near
    from service.core.projections.status import StatusDoc

    Command = Callable[[State, WorkspaceConfig, Clock], list[Event]]


class Workspace:
    """A store, the project commands apply to, and who is writing."""

    def __init__(self, store: StorePort, project: str | None, origin: Origin | Callable[[], Origin]) -> None:
        self.store = store
        self.project = project
        self._origin = origin  # a callable: found at the first write, so a read never looks
        self._states: dict[str, tuple[State, Sequence[Quarantined]]] = {}

    @property
    def origin(self) -> Origin:
        """Who is writing."""
        if callable(self._origin):
            self._origin = self._origin()
        return self._origin

    # --- opening -------------------------------------------------------------------------

    def require_project(self) -> str:
        if not self.project:
            raise Invalid("no project selected", code="no-project")
        projects = self.projects_known()
        if self.project not in projects:
            known = ", ".join(sorted(projects)) or "none yet"
            raise Invalid(f"no project {self.project!r} (known: {known})", code="not-found", field="project")
        return self.project

    def projects_known(self) -> dict[str, Project]:
        """The workspace log's projects, from its hot slice (which keeps every project)."""
        return self.hot(WORKSPACE_LOG).state.projects

    # --- writing -------------------------------------------------------------------------

    def write(self, log: str, command: Command, names: Sequence[str] | None = None) -> list[Event]:
        """Run `command` on fresh state under the store lock and append what it returns.

        `names`: every record reference the command resolves (`requests.named`), so the
        transaction reads the log's hot slice and those records only; None: the whole state."""
        with self.store.transaction(log) as tx:
            from service.core.commands.commands import Clock

            clock = Clock(lambda: tx.next_ids(1)[0], tx.now(), self.origin, log)
            events = command(tx.view(names), tx.config, clock)
            tx.append(events)
        self._states.pop(log, None)
        return events

    def write_project(self, command: Command) -> list[Event]:
        return self.write(self.require_project(), command)

    def holds(self, log: str, prefix: str) -> bool:
        """Whether `log` has a record an id prefix (or an imported alias) names."""
        return self.hot(log).holds(prefix)

    def log_of(self, prefix: str) -> str:
        """The log holding the record an id prefix names: this project's, else the workspace's."""
        logs = [self.project] if self.project else []
        logs.append(WORKSPACE_LOG)
        found = [log for log in logs if self.holds(log, prefix)]
        if not found:
            ids.resolve(prefix, [], "record")
        return found[0]

    # --- reading -------------------------------------------------------------------------

    def state(self, log: str) -> State:
        return self.folded(log)[0]

    def folded(self, log: str) -> tuple[State, Sequence[Quarantined]]:
        """A log's state and quarantined lines, folded once per call of a command."""
        if log not in self._states:
            self._states[log] = self.store.state(log)
        return self._states[log]

    def config(self) -> WorkspaceConfig:
        return self.store.config()

    def hot(self, log: str) -> HotSlice:
        """A log's hot slice: what context and status read instead of the whole state."""
        return self.store.hot(log)

    def state_at(self, log: str, at: str) -> State:
        """Time travel: the fold of the log's prefix up to an event id or an ISO date/time."""
        from service.core.fold.fold import fold_all

        if not at.strip():
            raise Invalid("{at} is empty: give an event id or an ISO date such as 2026-11-30", field="at")
        events = self.store.read(log).events
        if ids.is_id(at):
            return fold_all(e for e in events if e.id <= at)
        try:
            moment = dt.datetime.fromisoformat(at.replace("Z", "+00:00"))
        except ValueError as exc:
            raise Invalid(
                f"{{at}} {at!r} is neither an event id nor an ISO date such as 2026-11-30", field="at"
            ) from exc
        try:  # the end of 9999-12-31, or 0001-01-01 east of UTC, has no UTC instant
            if len(at) == 10:
                moment = moment + dt.timedelta(days=1) - dt.timedelta(milliseconds=1)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=dt.UTC)
            limit = moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        except OverflowError:
            raise Invalid(f"{{at}} {at!r} falls outside the calendar's range in UTC", field="at") from None
        return fold_all(e for e in events if e.ts <= limit)

    # --- projections -----------------------------------------------------------------------

    def runs(self) -> dict[str, str]:
        """Liveness of every locally recorded process, judged now, on this machine."""
        return self.store.local.runs()

    def context(self) -> Draft:
        """Context from the hot slices: huge logs are not loaded whole."""

        from service.core.fold.hotslice import ColdCounts, stays_hot

        project = self.require_project()
        mine = self.hot(project)
        workspace = self.hot(WORKSPACE_LOG)
        shared = [e for e in workspace.state.entities.values() if e.live]
        for other in self.store.logs():
            if other not in (WORKSPACE_LOG, project):
                hot = self.hot(other).state
                shared += [e for e in hot.entities.values() if shared_with(project, e) and stays_hot(hot, e)]
        cold = ColdCounts(
            mine.cold.search + workspace.cold.search, mine.cold.open_work + workspace.cold.open_work
        )
        return self.context_of(
            project, mine.state, shared, len(mine.quarantined), cold, mine.near, mine.filler
        )

    def context_of(
        self,
        project: str,
        mine: State,
        shared: list[Entity],
        quarantined: int,
        cold: ColdCounts | None = None,
        near: Near | None = None,
        filler: Filler | None = None,
    ) -> Draft:
        """The context document of `project` from its state and the records shared with it."""
        from service.core.projections import context

        description = self.state(WORKSPACE_LOG).projects[project].description
        return context.draft_context(
            project, mine, shared, self.config(), today(), self.runs(), quarantined,
            description=description, cold=cold, near=near, now=self.now(), filler=filler,
        )  # fmt: skip

    def overview(self) -> OverviewDoc:
        from service.core.projections import overview

        workspace = self.state(WORKSPACE_LOG)
        rows = [(p, self.state(slug)) for slug, p in sorted(workspace.projects.items())]
        return overview.overview(rows, today(), [s.detail for s in workspace.signals])

    def status(self) -> StatusDoc:
        from service.core.projections import status

        project = self.require_project()
        sliced = self.hot(project)  # what status reads, without loading the whole state
        located = [(q.file, q.line, q.reason) for q in sliced.quarantined]
        return status.build_status(
            project, sliced.state, self.runs(), located, today(), self.now(),
            cold=sliced.cold, near=sliced.near, fetch=sliced.fetch,
        )  # fmt: skip

    def now(self) -> str:
        """The instant a read judges proposals at (Superself's expiry, `core/fold/lapse.py`)."""
        return instant()

    def search(self, query: str, all_: bool, exposure: str | None) -> list[Entity]:
        from service.core.projections import search

        return search.search(query, self._search_pool(), all_, exposure)

    def search_hidden(self, query: str, all_: bool, exposure: str | None) -> int:
        """How many matches `search` left out because context shows them."""
        from service.core.projections import search

        return search.hidden(query, self._search_pool(), all_, exposure)

    def _search_pool(self) -> list[tuple[Entity, bool]]:
        """Every record of every log, with whether it is of the current project."""
        pool: list[tuple[Entity, bool]] = []
        for log in self.store.logs():
            current = log == self.project
            pool += [(e, current) for e in self.state(log).entities.values()]
        return pool

    def recent(self, n: int) -> list[Event]:
        if n < 1:
            raise Invalid(f"{{n}} {n}: give a positive number of events", field="n")
        log = self.require_project() if self.project else WORKSPACE_LOG
        return self.store.newest(log, n)

    def refold(self) -> dict[str, list[dict[str, Any]]]:
        """Fold every log from nothing, bypassing the cache, and say what each holds."""
        rows: list[dict[str, Any]] = []
        for log in self.store.logs():
            state, quarantined = self.store.refold(log)
            rows.append(
                {
                    "log": log,
                    "events": state.events,
                    "entities": len(state.entities),
                    "unknown": state.unknown,
                    "signals": [s.detail for s in state.signals],
                    "quarantined": [
                        {"file": q.file, "line": q.line, "reason": q.reason} for q in quarantined
                    ],
                }
            )
        return {"logs": rows}

    def show(
        self, prefix: str, history: bool, at: str | None
    ) -> tuple[Entity, list[Event], dict[str, object] | None]:
        """One record, its own events when asked, and a ledger record's derived keys."""
        from service.core.projections.views import ledger_extras

        log = self.log_of(prefix)
        state = self.state_at(log, at) if at is not None else self.state(log)
        from service.core.commands import commands

        entity = commands.find(state, prefix)
        extra = ledger_extras(state, [entity.id]).get(entity.id)
        if not history:
            return entity, [], extra
        from service.core.fold.history import events_of

        return entity, events_of(entity.id, self.store.holding(log, entity.id)), extra

    def ledger_extras(self, entities: list[Entity]) -> dict[str, dict[str, object]]:
        """The ledger keys of the ledger records among `entities`, each from its own log."""
        from service.core.projections.views import ledger_extras

        found: dict[str, dict[str, object]] = {}
        for log in sorted({e.project for e in entities if e.id in self.state(e.project).ledger}):
            found |= ledger_extras(self.state(log), [e.id for e in entities if e.project == log])
        return found

    def work_show(self, prefix: str) -> dict[str, Any]:
        from service.core.projections import views

        state = self.state(self.log_of(prefix))
        from service.core.commands import commands

        return views.work_show(state, commands.find(state, prefix).id, self.runs())

    def work_list(self, all_: bool) -> dict[str, Any]:
        from service.core.projections import views

        return views.work_list(self.state(self.require_project()), all_)

    # --- administration ------------------------------------------------------------------

    def projects(self) -> list[dict[str, object]]:
        projects = self.state(WORKSPACE_LOG).projects
        return [
            {"slug": p.slug, "description": p.description, "archived": p.archived, "added": p.added}
            for p in sorted(projects.values(), key=lambda p: p.slug)
        ]

    def link_checkout(self, path: Path) -> Path:
        """Mark `path` as a checkout of this project, in this store (a store on disk: its
        marker names both, so commands run there need no selection)."""
        from service.adapters.store import Store

        slug = self.require_project()
        local.write_marker(path, slug, self.store.root if isinstance(self.store, Store) else None)
        self.store.local.link(slug, path)
        return path.resolve()

    def aliases(self) -> list[dict[str, object]]:
        from service.core.commands.config import DEFAULT_ALIASES

        config = self.config()
        return [
            {
                "verb": verb,
                "label": row.label,
                "exposure": row.exposure,
                "priority": row.priority,
                "edited": verb in config.aliases or verb not in DEFAULT_ALIASES,
            }
            for verb, row in sorted(config.alias_table().items())
        ]

    def edit_alias(
        self, action: str, verb: str, label: str | None, exposure: str | None, priority: int | None
    ) -> None:
        from service.core.commands.config import edit_alias

        self.store.save_config(edit_alias(self.config(), action, verb, label, exposure, priority))

    def tokens(self, per_char: float | None) -> dict[str, object]:
        config = self.config()
        if per_char is not None:
            if not 0 < per_char <= 4:
                raise Invalid(
                    f"{{tokens_per_char}} {per_char}: tokens per character must be above 0 and at most 4",
                    field="tokens_per_char",
                )
            config = msgspec.structs.replace(config, tokens_per_char=per_char)
            self.store.save_config(config)
        return {
            "tokens_per_char": config.tokens_per_char,
            "full_tokens": config.caps.full_tokens,
            "index_tokens": config.caps.index_tokens,
            "context_budget": config.context_budget,
        }

    def checkout(self) -> Path | None:
        """The checkout linked to this project: the one holding the working directory, else
        the only one linked."""
        if not self.project:
            return None
        links = {Path(p): slug for p, slug in self.store.local.links().items() if slug == self.project}
        here = Path.cwd().resolve()
        for candidate in (here, *here.parents):
            if candidate in links:
                return candidate
        return next(iter(links)) if len(links) == 1 else None

    def checkout_head(self) -> str | None:
        """The head commit of the linked checkout (None without one, or outside git)."""
        from service.adapters import checkout

        path = self.checkout()
        return None if path is None else checkout.head(path)

    def work_outcome(self, prefix: str) -> dict[str, object]:
        """Intended outcomes against the files the linked checkout changed between the unit's
        start and done commits (its head when it is not done yet)."""
        from service.adapters import checkout
        from service.core.events.events import EntityWhy, payload_of
        from service.core.fold.history import events_of
        from service.core.ledger import worksets

        log = self.log_of(prefix)
        from service.core.commands import commands

        unit = commands.find(self.state(log), prefix)
        start = end = None
        for event in events_of(unit.id, self.store.holding(log, unit.id)):
            payload = payload_of(event)
            if isinstance(payload, EntityWhy) and payload.entity == unit.id and payload.commit:
                if event.type == "entity.started":
                    start, end = payload.commit, None
                elif event.type == "entity.done":
                    end = payload.commit
        if start is None:
            raise Invalid(
                f"{unit.id} has no start commit: link the checkout before the work starts, "
                "so the start records its head",
                code="no-checkout",
                field="record",
            )
        path = self.checkout()
        if path is None:
            raise Invalid("no checkout is linked to this project", code="no-checkout")
        done = end is not None
        end, realized = checkout.changed(path, start, end)
        intended = list(unit.ledger.intends) if unit.ledger is not None else []
        return {"work": unit.id, "start": start, "end": end, "done": done} | worksets.outcome(
            realized, intended
        )

    def decision_rows(self) -> list[dict[str, Any]]:
        """This project's decision rows (`exchange.decision_rows`), each unit a decision led to
        with the files it changed against its intended outcomes when the linked checkout
        holds its commits (else those three are None)."""
        from service.core.interop import exchange

        rows = exchange.decision_rows(self.state(self.require_project()))
        for row in rows:
            for unit in row["work"]:
                try:
                    outcome = self.work_outcome(unit["id"])
                except Invalid:
                    outcome = {}
                unit.update({key: outcome.get(key) for key in ("intentional", "unintentional", "unrealized")})
        return rows

    def log_ruling(self, ruling: dict[str, object]) -> None:
        """The gate's rulings, one JSON line each, in this machine's `.local/gate.jsonl`."""
        self.store.local.log_ruling(ruling)

    def import_superself(self, path: Path) -> ImportSummary:
        from service.adapters.importers.superself import import_superself
        from service.adapters.store import Store

        if not isinstance(self.store, Store):
            raise Invalid("a Superself import writes to a store on disk", code="store")
        return import_superself(self.store, path, self.origin)


def today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


def instant() -> str:
    """The wall clock (`adapters/store/clock.py`) as ISO-8601 UTC with milliseconds."""
    from service.adapters.store import clock

    return clock.now()
