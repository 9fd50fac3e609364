"""Row and JSON views of folded state: `state list`, `state show`, `work list`, `work show`.

Views read state and never write it. JSON rows are plain dicts with a fixed key set (the
`state list --json` contract); text renders are one record per line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from service.core.errors import Invalid
from service.core.events.events import Exposure
from service.core.fold import lapse
from service.core.fold.state import Entity, Report, Run, State
from service.core.ledger import completion, derived, ledger
from service.core.projections.render import label_of, one_line, plural, shorts_for
from service.core.projections.render import short_ids as short_ids  # re-exported for list commands

ROW_KEYS = (
    "id",
    "short",
    "project",
    "labels",
    "text",
    "why",
    "status",
    "execution",
    "exposure",
    "priority",
    "scope",
    "target",
    "criteria",
    "covered",
    "blocked_on",
    "superseded_by",
    "supersedes",
    "links",
    "pending",
    "created",
    "updated",
)


def ordered(entities: Iterable[Entity]) -> list[Entity]:
    """Entities in render order: priority, then recency (two stable sorts, no per-key tuples)."""
    by_recency = sorted(entities, key=_created, reverse=True)
    return sorted(by_recency, key=_priority)


def _created(e: Entity) -> str:
    return e.created


def _priority(e: Entity) -> tuple[bool, int]:
    return (e.priority is None, e.priority or 0)


def is_pending(e: Entity) -> bool:
    """The record itself, or a placement of it, waits on a person's confirmation."""
    return e.live and (e.status == "proposed" or bool(e.pending))


def is_waiting(e: Entity, now: str | None = None) -> bool:
    """Pending, or a unit blocked on a decision (someone has to make it), as Superself
    listed it under "Waiting on you"; at instant `now`, a proposal past its expiry with no
    placement pending does not wait (`lapse`)."""
    if e.pending and e.live:
        return True
    if lapse.lapsed(e, now):
        return False
    return is_pending(e) or (e.live and awaits_decision(e))


def awaits_decision(e: Entity) -> bool:
    return e.status == "confirmed" and e.execution == "blocked" and e.blocked_on == "decision"


def ledger_extras(state: State, only: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """The keys ledger records add to their rows: recorded fields and derived views."""
    found: dict[str, dict[str, Any]] = {}
    for record_id, view in derived.derive(state, only).items():
        e = state.entities.get(record_id)
        if e is not None:
            found[record_id] = derived.view_row(view) | ledger.record_row(e, state.ledger[record_id])
    return found


def entity_row(e: Entity, short: str, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The JSON row of one record (`state list --json`); ledger records carry `extra` too."""
    row = {
        "id": e.id,
        "short": short,
        "project": e.project,
        "labels": list(e.labels),
        "text": e.text,
        "why": e.why,
        "status": e.status,
        "execution": e.execution,
        "exposure": e.exposure,
        "priority": e.priority,
        "scope": e.scope,
        "target": e.target,
        "criteria": list(e.criteria),
        "covered": list(e.covered),
        "blocked_on": e.blocked_on,
        "superseded_by": e.superseded_by,
        "supersedes": e.supersedes,
        "links": [_link(link.type, link.target, link.set) for link in e.links],
        "pending": is_pending(e),
        "created": e.created,
        "updated": e.updated,
    }
    return row | dict(extra) if extra else row


def _link(link_type: str, target: str, group: int | None) -> dict[str, Any]:
    found: dict[str, Any] = {"type": link_type, "target": target}
    if group is not None:
        found["set"] = group
    return found


def list_rows(state: State, all_: bool) -> list[Entity]:
    """Live records by default, every record with `all_`, in priority-then-recency order."""
    chosen = state.entities.values() if all_ else state.live()
    return ordered(chosen)


def _placement(e: Entity) -> str:
    return e.exposure if e.priority is None else f"{e.exposure} p{e.priority}"


def _marks(e: Entity, extra: Mapping[str, Any] | None = None, shorts: Mapping[str, str] | None = None) -> str:
    marks: list[str] = [f"alias {e.ledger.alias}"] if e.ledger is not None and e.ledger.alias else []
    if e.status != "confirmed":
        marks.append(e.status)
    if e.execution:
        marks.append(e.execution if e.execution != "blocked" else f"blocked on {e.blocked_on}")
    if e.pending:
        marks.append("placement waiting")
    if e.target:
        marks.append(f"target {e.target}")
    if extra:
        marks += ledger_words(extra, (lambda i: shorts.get(i, i)) if shorts else str)
    return f"  ({', '.join(marks)})" if marks else ""


def ledger_words(extra: Mapping[str, Any], short: Callable[[str], str] = str) -> list[str]:
    """The marks of a ledger row: its recorded state unless plain (accepted, adopted, open),
    then support, blocking and resolution, ids through `short`."""
    words: list[str] = []
    if extra["state"] not in ("accepted", "adopted", "open"):
        words.append(extra["state"])
    shown = derived.surfaced(extra["current"], extra["state"])
    if shown and extra["support"] == "flagged":
        owed = ", ".join(short(o["ground"]) for o in extra["review_owed"])
        words.append(f"flagged: review owed on {owed}")
    elif shown and extra["support"] == "unsupported":
        words.append("unsupported")
    if extra["blocked"]:
        words.append("blocked on " + ", ".join(short(i) for i in extra["blocked_by"]))
    if extra["resolved"]:
        words.append("resolved by " + ", ".join(short(i) for i in extra["resolved_by"]))
    elif extra["resolved"] is False and extra["current"]:
        words.append("unresolved")
    if extra.get("moot"):
        words.append("moot: every answer leads to the same action")
    return words


def list_line(
    e: Entity, short: str, extra: Mapping[str, Any] | None = None, shorts: Mapping[str, str] | None = None
) -> str:
    """One `state list` line: short id, label, placement, text, and marks (ids in marks
    through `shorts`)."""
    return f"{short}  {label_of(e)}  {_placement(e)}  {one_line(e.text)}{_marks(e, extra, shorts)}"


def show_text(e: Entity, short: str | None = None, extra: Mapping[str, Any] | None = None) -> str:
    """`state show`: every field of one record, one per line (a ledger record's too)."""
    data = entity_row(e, short or e.id, extra)
    lines = [f"{e.id}  [{label_of(e)}]  {e.text}"]
    for key in [*ROW_KEYS[5:], *(k for k in data if k not in ROW_KEYS)]:
        value = data[key]
        if value in (None, [], False):
            continue
        if key == "links":
            value = ", ".join(f"{link['type']} {link['target']}" for link in value)
        elif key in ("review_owed", "lost"):
            value = "; ".join(ledger_reason(item) for item in value)
        elif key == "supports":
            value = " or ".join("+".join(group) for group in value)
        elif isinstance(value, list):
            value = "; ".join(str(v) for v in value)
        lines.append(f"  {key}: {value}")
    for pending in e.pending:
        lines.append(f"  waiting placement: {_pending_text(pending.exposure, pending.priority)}")
    return "\n".join(lines) + "\n"


def ledger_reason(item: Mapping[str, Any]) -> str:
    """`c1 revise (now c3)`: a ground, why it counts as it does, and the head of its chain."""
    head = item.get("head")
    now = f" (now {head})" if head and head != item["ground"] else ""
    return f"{item['ground']} {item['reason']}{now}"


def _pending_text(exposure: Exposure | None, priority: int | None) -> str:
    parts = [p for p in (exposure, None if priority is None else f"p{priority}") if p]
    return " ".join(parts) or "scope change"


# --- work ---------------------------------------------------------------------------------


def is_work(e: Entity) -> bool:
    return "work" in e.labels


def work_units(state: State, all_: bool = False) -> list[Entity]:
    """Work units: open ones (in progress, blocked, next) by default; every one with `all_`."""
    units = [e for e in state.entities.values() if is_work(e) and (all_ or e.live)]
    rank = {"in-progress": 0, "blocked": 1, None: 2}
    return sorted(ordered(units), key=lambda e: rank.get(e.execution, 3))


def work_word(e: Entity) -> str:
    """Where a unit stands: in-progress, blocked (on …), next, proposed, done, …"""
    if e.execution == "blocked":
        return f"blocked (on {e.blocked_on})"
    if e.status in ("superseded", "retracted"):
        return e.status
    return e.execution or ("proposed" if e.status == "proposed" else "next")


def work_list(state: State, all_: bool = False) -> dict[str, Any]:
    """The `work list` document: unit rows (each with its `word`), open and done counts."""
    units = work_units(state, all_)
    shorts = shorts_for([e.id for e in units], state.entities)
    done = sum(1 for e in state.entities.values() if is_work(e) and e.execution == "done")
    return {
        "units": [entity_row(e, shorts[e.id]) | {"word": work_word(e)} for e in units],
        "open": sum(1 for e in units if e.live),
        "done": done,
        "all": all_,
    }


def work_list_text(doc: dict[str, Any]) -> str:
    """The `work list` text, modelled on Superself's: open units, then a done count."""
    lines = [f"{u['short']}  {u['word']}  {one_line(u['text'])}" for u in doc["units"]]
    if doc["done"] and not doc["all"]:
        lines.append(f"({doc['done']} done — `self work list --all` lists them)")
    lines.append(plural(doc["open"], "open work unit"))
    return "\n".join(lines) + "\n"


def _report_row(r: Report) -> dict[str, Any]:
    return {
        "id": r.id,
        "ts": r.ts,
        "text": r.text,
        "commit": r.commit,
        "artifact": r.artifact,
        "notes": list(r.notes),
    }


def _run_row(work_id: str, run: Run | None, liveness: str | None) -> dict[str, Any] | None:
    if run is None and liveness is None:
        return None
    return {
        "work": work_id,
        "started": run.started if run else None,
        "exited": run.exited if run else None,
        "code": run.code if run else None,
        "local": liveness,
    }


def evidence(e: Entity, reports: list[Report]) -> dict[str, Any]:
    """The completion gate's judgement now: done, ready to be done, or why not."""
    if e.execution == "done":
        return {"judgement": "done", "refusal": None}
    reason = completion.refusal(e, reports, done_ts="")
    return {"judgement": "ready" if reason is None else "refused", "refusal": reason}


def work_show(state: State, work_id: str, runs: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One unit's recovery line: outcome, status, execution, reports, evidence, runs.

    `work_id` is a full id (resolve prefixes first); `runs` maps work id → local liveness.
    """
    e = state.entities.get(work_id)
    if e is None:
        raise Invalid(f"no record has id {work_id!r}", code="not-found", field="record")
    reports = state.reports.get(work_id, [])
    run = _run_row(work_id, state.runs.get(work_id), (runs or {}).get(work_id))
    members = sorted(
        other.id
        for other in state.entities.values()
        if any(link.type == "member-of" and link.target == work_id for link in other.links)
    )
    return {
        "id": e.id,
        "short": shorts_for([e.id], state.entities)[e.id],
        "project": e.project,
        "outcome": e.text,
        "labels": list(e.labels),
        "status": e.status,
        "execution": e.execution,
        "blocked_on": e.blocked_on,
        "closed_why": e.closed_why,
        "criteria": [{"criterion": c, "covered": c in e.covered} for c in e.criteria],
        "parents": [link.target for link in e.links if link.type == "member-of"],
        "members": members,
        "reports": [_report_row(r) for r in reports],
        "evidence": evidence(e, reports),
        "runs": [run] if run else [],
    }


def work_show_text(doc: dict[str, Any]) -> str:
    """The text render of `work_show`."""
    lines = [f"{doc['short']}  {doc['outcome']}"]
    execution = doc["execution"] or ("next" if doc["status"] == "confirmed" else "-")
    if doc["blocked_on"]:
        execution = f"blocked on {doc['blocked_on']}"
    lines.append(f"status: {doc['status']}, execution: {execution}")
    for item in doc["criteria"]:
        lines.append(f"criterion [{'x' if item['covered'] else ' '}] {item['criterion']}")
    if doc["parents"]:
        lines.append("member of: " + ", ".join(doc["parents"]))
    lines.append(plural(len(doc["reports"]), "report") + (":" if doc["reports"] else ""))
    for report in doc["reports"]:
        proof = [f"commit {report['commit']}"] if report["commit"] else []
        proof += [f"artifact {report['artifact']}"] if report["artifact"] else []
        proof += report["notes"]
        suffix = f" ({', '.join(proof)})" if proof else ""
        lines.append(f"  - {report['ts'][:19]} {report['text']}{suffix}")
    verdict = doc["evidence"]
    if verdict["judgement"] == "done":
        lines.append("evidence: accepted (done)")
    elif verdict["judgement"] == "ready":
        lines.append("evidence: sufficient; `self work done` would be accepted")
    else:
        lines.append(f"evidence: not yet — {verdict['refusal']}")
    lines += [_run_text(run) for run in doc["runs"]]
    return "\n".join(lines) + "\n"


def _run_text(run: dict[str, Any]) -> str:
    if run["exited"] is not None:
        return f"process: exited (code {run['code']})"
    return f"process: {process_word(None, run['local'])}"


LIVENESS_WORDS = {
    "running": "running",
    "exited": "exited (the exit is not in the log yet)",
    "stale": "stale: no live process and no recorded exit",
    "other-machine": "started on another machine",
}


def process_word(run: Run | None, liveness: str | None) -> str:
    """What is known of a unit's process: the synced exit first, else the local ledger's word."""
    if run is not None and run.exited is not None:
        return f"exited (code {run.code})"
    if liveness is not None:
        return LIVENESS_WORDS.get(liveness, liveness)
    return "started (no local process record)"
