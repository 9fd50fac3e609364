"""The writer's job for posted events (`service.model.posted`): ids given or issued, a new
record's entity filled in, every event checked and folded with the others of its post or
none of them, and a post repeated with the same ids answered as the first one was."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.model import admit, ids, order, posted
from service.model.errors import Invalid
from service.model.events import Event, Origin
from service.store import clock
from service.store.layout import display
from service.workspace import WORKSPACE_LOG

if TYPE_CHECKING:
    from service.live.space import LiveWorkspace
    from service.live.writer import Batch


def post(live: LiveWorkspace, body: posted.PostEvents, origin: Origin, batch: Batch) -> posted.Posted:
    """Write the events of one post in `batch`; the ids in the order given."""
    planned: dict[str, list[Event]] = {}
    given: list[str] = []
    repeated = 0
    posts: dict[str, admit.Post] = {}
    for n, new in enumerate(body.events):
        log = _log_of(live, new.project, n)
        floor = planned[log][-1].id if planned.get(log) else live.state(log)[0].last_id
        if new.id is None:
            event_id = batch.new_id(floor)
        else:
            event_id = new.id
            if _repeated(live, log, new, n):
                given.append(event_id)
                repeated += 1
                continue
            _check_given(event_id, floor, n)
        event = posted.make(new, event_id, batch.now, origin)
        admit.admit(live.state(log)[0], event, n, posts.setdefault(log, admit.Post(batch.config)))
        planned.setdefault(log, []).append(event)
        given.append(event_id)
    batch.add_all(planned)
    return posted.Posted(given, None, replayed=repeated == len(body.events))


def _log_of(live: LiveWorkspace, project: str, n: int) -> str:
    if project == WORKSPACE_LOG:
        return project
    known = live.state(WORKSPACE_LOG)[0].projects
    if project not in known:
        names = ", ".join(sorted(known)) or "none yet"
        raise Invalid(
            f"{{events[{n}].project}} {project!r} is no project of this workspace (known: {names}); "
            'add it first, or give "" for the workspace log',
            code="not-found",
            field=f"events[{n}].project",
        )
    return project


def _check_given(event_id: str, floor: str | None, n: int) -> None:
    if ids.beyond_horizon(event_id, clock.wall_ms()):
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


def _repeated(live: LiveWorkspace, log: str, new: posted.NewEvent, n: int) -> bool:
    """Whether the log holds `new.id` already: the same event (a retry: True) or another one
    (refused). An id after the log's last is new."""
    assert new.id is not None
    if order.after(new.id, live.state(log)[0].last_id):
        return False
    held = live.feed.get(new.id) or _on_disk(live, log, new.id)
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


def _on_disk(live: LiveWorkspace, log: str, event_id: str) -> Event | None:
    """The logged event `event_id`, decoding only the segments that may hold it."""
    from service.store.segments import read_after

    before = ids.encode(ids.decode(event_id) - 1) if ids.decode(event_id) else None
    return next((e for e in read_after(live.store.root, log, before) if e.id == event_id), None)
