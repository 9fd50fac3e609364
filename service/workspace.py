"""The one module that wires the store adapter to the pure model.

CLI commands (and later HTTP handlers) make one call here and render what comes back.
Writes run a pure command inside a store transaction; reads fold through the cache.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable
from pathlib import Path

from service.model import commands, ids
from service.model.commands import Clock
from service.model.config import WorkspaceConfig
from service.model.errors import Invalid
from service.model.events import Event, Origin
from service.model.state import Entity, State
from service.store import Store, local

WORKSPACE_LOG = ""
Command = Callable[[State, WorkspaceConfig, Clock], list[Event]]


class Workspace:
    """A store, the project commands apply to, and who is writing."""

    def __init__(self, store: Store, project: str | None, origin: Origin) -> None:
        self.store = store
        self.project = project
        self.origin = origin

    # --- opening -------------------------------------------------------------------------

    @classmethod
    def locate(cls, workspace: str | None, project: str | None, cwd: Path | None = None) -> Workspace:
        root = workspace or os.environ.get("SELF_WORKSPACE")
        if not root:
            raise Invalid(
                "no workspace store selected: run `self init DIR`, then pass --workspace DIR "
                "or set SELF_WORKSPACE=DIR"
            )
        store = Store.open(Path(root).expanduser())
        slug = project or os.environ.get("SELF_PROJECT") or local.find_marker(cwd or Path.cwd())
        return cls(store, slug, origin_from_env())

    def proposed(self) -> Workspace:
        """The same workspace, writing as a proposal that waits on a person."""
        origin = Origin(self.origin.actor, False, self.origin.session, self.origin.by)
        return Workspace(self.store, self.project, origin)

    def require_project(self) -> str:
        if not self.project:
            raise Invalid(
                "no project selected: pass --project SLUG, set SELF_PROJECT, or run "
                "`self project link SLUG` in the checkout"
            )
        projects = self.state(WORKSPACE_LOG).projects
        if self.project not in projects:
            known = ", ".join(sorted(projects)) or "none yet"
            raise Invalid(f"no project {self.project!r} (known: {known}); `self project add` registers one")
        return self.project

    # --- writing -------------------------------------------------------------------------

    def write(self, log: str, command: Command) -> list[Event]:
        """Run `command` on fresh state under the store lock and append what it returns."""
        with self.store.transaction(log) as tx:
            clock = Clock(lambda: tx.next_ids(1)[0], tx.now(), self.origin, log)
            events = command(tx.state, tx.config, clock)
            tx.append(events)
        return events

    def write_project(self, command: Command) -> list[Event]:
        return self.write(self.require_project(), command)

    def log_of(self, prefix: str) -> str:
        """The log holding the record an id prefix names: this project's, else the workspace's."""
        logs = [self.project] if self.project else []
        logs.append(WORKSPACE_LOG)
        found = []
        for log in logs:
            state = self.state(log)
            if any(k.startswith(prefix.lower()) for k in state.entities):
                found.append(log)
        if not found:
            ids.resolve(prefix, [], "record")
        return found[0]

    def write_entity(self, prefix: str, command: Command) -> list[Event]:
        """Write to whichever log holds the record `prefix` names."""
        return self.write(self.log_of(prefix), command)

    # --- reading -------------------------------------------------------------------------

    def state(self, log: str) -> State:
        return self.store.state(log)[0]

    def config(self) -> WorkspaceConfig:
        return self.store.config()

    def shared(self, project: str) -> list[Entity]:
        """Workspace-scoped records every project's context shows."""
        shared = [e for e in self.state(WORKSPACE_LOG).entities.values() if e.live]
        for other in self.store.logs():
            if other not in (WORKSPACE_LOG, project):
                shared += [e for e in self.state(other).entities.values() if e.live and e.scope == "workspace"]
        return shared

    def state_at(self, log: str, at: str) -> State:
        """Time travel: the fold of the log's prefix up to an event id or an ISO date/time."""
        from service.model.fold import fold_all

        events = self.store.read(log).events
        if ids.is_id(at):
            return fold_all(e for e in events if e.id <= at)
        try:
            moment = dt.datetime.fromisoformat(at.replace("Z", "+00:00"))
        except ValueError as exc:
            raise Invalid(f"--at {at!r} is neither an event id nor an ISO date such as 2026-11-30") from exc
        if len(at) == 10:
            moment = moment + dt.timedelta(days=1) - dt.timedelta(milliseconds=1)
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.UTC)
        limit = moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        return fold_all(e for e in events if e.ts <= limit)


def origin_from_env() -> Origin:
    actor = os.environ.get("SELF_ACTOR", "human")
    if actor not in ("agent", "human"):
        raise Invalid(f"SELF_ACTOR={actor!r} is neither agent nor human")
    return Origin(actor, True, os.environ.get("SELF_SESSION") or None, os.environ.get("SELF_USER") or None)  # type: ignore[arg-type]


def today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()
