"""Events posted as they are (`POST …/events`, `service.core.events.posted`), run on a unit of work
(`ports.UnitPort`): ids given or issued, each event checked as a command's would be
(`core/gates/admit.py`) and folded with the others of its post or none of them, and a post repeated
with the same ids answered as the first one was."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.core.errors import Invalid
from service.core.events import ids, order, posted
from service.core.events.events import WORKSPACE_LOG, Event, Origin
from service.core.gates import admit
from service.core.gates.event_gate import display

if TYPE_CHECKING:
    from service.app.ports import UnitPort
    from service.app.workspace import Workspace


def post(workspace: Workspace, body: posted.PostEvents) -> posted.Posted:
    """Write the events of one post as the workspace's writer, in one unit of work; the ids in
    the order given."""
    with workspace.store.unit() as unit:
        return write(unit, body, workspace.origin)


def write(unit: UnitPort, body: posted.PostEvents, origin: Origin) -> posted.Posted:
    planned: dict[str, list[Event]] = {}
    given: list[str] = []
    repeated = 0
    posts: dict[str, admit.Post] = {}
    for n, new in enumerate(body.events):
        log = _log_of(unit, new.project, n)
        floor = planned[log][-1].id if planned.get(log) else unit.state(log).last_id
        if new.id is None:
            event_id = unit.new_id(floor)
        else:
            event_id = new.id
            if _repeated(unit, log, new, n):
                given.append(event_id)
                repeated += 1
                continue
            _check_given(event_id, floor, unit.now_ms, n)
        event = posted.make(new, event_id, unit.now, origin)
        admit.admit(unit.state(log), event, n, posts.setdefault(log, admit.Post(unit.config)))
        planned.setdefault(log, []).append(event)
        given.append(event_id)
    unit.add_all(planned)
    return posted.Posted(given, None, replayed=repeated == len(body.events))


def _log_of(unit: UnitPort, project: str, n: int) -> str:
    if project == WORKSPACE_LOG:
        return project
    known = unit.state(WORKSPACE_LOG).projects
    if project not in known:
        names = ", ".join(sorted(known)) or "none yet"
        raise Invalid(
            f"{{events[{n}].project}} {project!r} is no project of this workspace (known: {names}); "
            'add it first, or give "" for the workspace log',
            code="not-found",
            field=f"events[{n}].project",
        )
    return project


def _check_given(event_id: str, floor: str | None, now_ms: int, n: int) -> None:
    if ids.beyond_horizon(event_id, now_ms):
        raise Invalid(
            f"{{events[{n}].id}} {event_id} is dated more than {ids.HORIZON_MS // 3_600_000} h ahead of "
            "the service's clock; leave the id out and the service gives one",
            field=f"events[{n}].id",
        )
    if not order.after(event_id, floor):
        raise Invalid(
            f"{{events[{n}].id}} {event_id} is not after {floor}, the last id of its log; "
            "leave the id out and the service gives one",
            code="wrong-state",
            field=f"events[{n}].id",
        )


def _repeated(unit: UnitPort, log: str, new: posted.NewEvent, n: int) -> bool:
    """Whether the log holds `new.id` already: the same event (a retry: True) or another one
    (refused). An id after the log's last is new."""
    assert new.id is not None
    if order.after(new.id, unit.state(log).last_id):
        return False
    held = unit.logged(log, new.id)
    if held is None:
        return False
    if held.project != log or not posted.same(new, held):
        raise Invalid(
            f"{{events[{n}].id}} {new.id} is taken by another event in {display(held.project)}; "
            "leave the id out and the service gives one",
            code="exists",
            field=f"events[{n}].id",
        )
    return True
