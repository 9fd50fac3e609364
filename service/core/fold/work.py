"""The fold's handlers of work and projects: execution facts (started, blocked, unblocked, done,
retired, restored), reports, runs, and a project's registration, archive and restore.

Two stores made on their own can both register a project under one slug; syncing them puts both
`project.added` events in the workspace log. The first (in id order) stands; the later one's
description fills in a missing one, and a different one is kept in a `project-registered-twice`
health signal (`self fold` lists signals), so no description is lost without a word
(`tests/integration/test_sync_projects.py`).
"""

from __future__ import annotations

from service.core.events.events import (
    VOUCHER,
    Blocked,
    EntityWhy,
    Event,
    Payload,
    ProjectAdded,
    ProjectChanged,
    ReportAdded,
    RunExited,
    RunStarted,
)
from service.core.fold import legacy, undo
from service.core.fold.records import Handler, relate, signal, target
from service.core.fold.state import Project, Report, Run, State
from service.core.ledger import completion

# --- execution facts ------------------------------------------------------------------


def _started(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = target(state, event, payload.entity)
    if entity is not None and entity.execution not in ("done", "retired"):
        entity.execution = "in-progress"
        entity.started = True
        entity.blocked_on = None


def _blocked(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, Blocked)
    entity = target(state, event, payload.entity)
    if entity is not None and entity.execution not in ("done", "retired"):
        entity.execution = "blocked"
        entity.blocked_on = payload.on or payload.why or "unspecified"
        entity.blocked_why = payload.why


def _unblocked(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = target(state, event, payload.entity)
    if entity is not None and entity.execution == "blocked":
        entity.execution = "in-progress" if entity.started else None
        entity.blocked_on = None


def _done(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = target(state, event, payload.entity)
    if entity is None:
        return
    if payload.report:  # Superself's done-time report, written inside the done
        state.reports.setdefault(entity.id, []).append(Report(event.id, event.ts, payload.report))
    judged = completion.vouched(state, event)
    reason = completion.refusal(entity, state.reports.get(entity.id, ()), event.ts, judged=judged)
    if reason is not None:
        signal(state, event, "done-refused", reason, entity.id)
        return
    entity.execution = "done"
    entity.blocked_on = None
    entity.closed_why = payload.why


def _retired(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, EntityWhy)
    entity = target(state, event, payload.entity)
    if entity is not None and entity.execution != "done":
        undo.remember_execution(entity, event.id)
        entity.execution = "retired"
        entity.closed_why = payload.why
        entity.superseded_by = payload.successor or entity.superseded_by


def _restored(state: State, event: Event, payload: Payload) -> None:
    """Undo of done or retired: the unit is open again. Retraction stays terminal. With
    `refs.annuls` (Superself's undo), the event it names is taken back instead."""
    assert isinstance(payload, EntityWhy)
    annulled = undo.annulled_id(event)
    if annulled is not None:
        for record in undo.annul(state, event, payload.entity, annulled):
            fact = state.ledger.get(record.id)
            if fact is not None:
                relate(fact, record)
        return
    entity = target(state, event, payload.entity)
    if entity is not None and entity.execution in ("done", "retired"):
        entity.execution = "in-progress" if entity.started else None
        entity.closed_why = None
        if entity.status != "superseded":
            entity.superseded_by = None  # a retirement's successor no longer stands


# --- reports, runs, projects ----------------------------------------------------------


def _report(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, ReportAdded)
    refs = event.refs or {}
    work = payload.work or refs.get("work")
    key = work if isinstance(work, str) else ""
    commits, notes = legacy.evidence(refs.get("commits"), payload.notes, payload.evidence_typed)
    commit = payload.commit or (commits[0] if commits else None)
    notes = [*commits[1:], *notes] if payload.commit is None else [*commits, *notes]
    report = Report(event.id, event.ts, payload.text, commit, payload.artifact, tuple(notes))
    state.reports.setdefault(key, []).append(report)


def _run_started(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, RunStarted)
    state.runs[payload.work] = Run(started=event.id)


def _run_exited(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, RunExited)
    run = state.runs.setdefault(payload.work, Run(started=event.id))
    run.exited = event.id
    run.code = payload.code


def _project_added(state: State, event: Event, payload: Payload) -> None:
    """The first registration of a slug stands. A later one (two stores made on their own,
    then synced) loses nothing: its description fills in a missing one, and a different
    description is kept in a health signal."""
    assert isinstance(payload, ProjectAdded)
    project = state.projects.get(payload.slug)
    if project is None:
        state.projects[payload.slug] = Project(payload.slug, event.id, payload.description)
    elif project.description is None:
        project.description = payload.description
    elif payload.description not in (None, project.description):
        signal(
            state,
            event,
            "project-registered-twice",
            f"project {payload.slug} was registered again as {payload.description!r}; "
            f"the first registration's {project.description!r} is kept",
        )


def _project_changed(state: State, event: Event, payload: Payload) -> None:
    assert isinstance(payload, ProjectChanged)
    project = state.projects.get(payload.name or "")
    if project is None and payload.name == event.project:
        return  # Superself's archive in the project's own log: the importer carries it over
    if project is None:
        signal(state, event, "unknown-project", f"{event.type} names no known project")
        return
    project.archived = event.type == "project.archived"
    project.why = payload.why


HANDLERS: dict[str, Handler] = {
    "entity.started": _started,
    "entity.blocked": _blocked,
    "entity.unblocked": _unblocked,
    "entity.done": _done,
    "entity.retired": _retired,
    "entity.restored": _restored,
    "report.added": _report,
    "work.run-started": _run_started,
    "work.run-exited": _run_exited,
    "project.added": _project_added,
    "project.archived": _project_changed,
    "project.restored": _project_changed,
    VOUCHER: completion.vouch,
}
