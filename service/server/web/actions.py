"""What the view's forms ask, as command values (`service/core/commands/requests.py`): an action
on a record, or a new record, parsed from its form into the one command `POST …/commands`
would run for it. Nothing here reads a request or a store."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import msgspec

from service.core.commands import requests as rq
from service.core.errors import Invalid

Back = Literal["record", "project"]  # the page a form returns to


class ActionForm(msgspec.Struct, frozen=True):
    """Every field an action's form may send; each action reads its own."""

    form_token: str = ""
    back: Back = "record"
    why: str = ""
    state: str = ""
    on: str = ""
    text: str = ""
    commit: str = ""
    artifact: str = ""


class AddForm(msgspec.Struct, frozen=True):
    """The project page's form for a new record: its kind, its text, why."""

    form_token: str = ""
    kind: str = ""
    text: str = ""
    why: str = ""


# The kinds the add form offers: kind → the preset verb whose label and placement it takes.
KINDS = {
    "goal": "goal",
    "decision": "decide",
    "claim": "claim",
    "question": "question",
    "idea": "idea",
    "work": "work",
}


def _given(value: str) -> str | None:
    """A form's text field: None when left empty."""
    return value.strip() or None


def _report(record: str, form: ActionForm) -> rq.AnyCommand:
    return rq.Report(
        record=record, text=form.text, commit=_given(form.commit), artifact=_given(form.artifact)
    )


def _done(record: str, form: ActionForm) -> rq.AnyCommand:
    """Done, with the report the form adds (if any): refused without evidence."""
    return rq.Done(
        record=record,
        report=_given(form.text),
        commit=_given(form.commit),
        artifact=_given(form.artifact),
        unit=True,
    )


ACTIONS: dict[str, Callable[[str, ActionForm], rq.AnyCommand]] = {
    "confirm": lambda r, _: rq.Confirm(record=r),
    "decline": lambda r, f: rq.Decline(record=r, why=_given(f.why)),
    "review": lambda r, f: rq.Review(record=r, why=_given(f.why)),
    "assess": lambda r, f: rq.Assess(record=r, state=f.state, why=_given(f.why)),
    "start": lambda r, _: rq.Start(record=r, unit=True),
    "block": lambda r, f: rq.Block(record=r, on=_given(f.on), why=_given(f.why), unit=True),
    "unblock": lambda r, _: rq.Unblock(record=r, unit=True),
    "report": _report,
    "done": _done,
}


def command_of(action: str, record: str, form: ActionForm) -> rq.AnyCommand:
    """The command of `action` on `record`; Invalid for an action the view does not offer."""
    made = ACTIONS.get(action)
    if made is None:
        raise Invalid(f"{action!r} is not an action: use one of {', '.join(ACTIONS)}", field="action")
    return made(record, form)


def added(form: AddForm) -> rq.Add:
    """The add command of the form's kind; Invalid for a kind it does not offer."""
    preset = KINDS.get(form.kind)
    if preset is None:
        raise Invalid(
            f"{form.kind!r} is not a kind of record: choose one of {', '.join(KINDS)}", field="kind"
        )
    return rq.Add(text=form.text, preset=preset, why=_given(form.why))


OPEN = (None, "in-progress", "blocked")  # a work unit's executions before it ends


def offered(row: dict[str, Any]) -> list[str]:
    """The actions a record's page offers for its row (`state show --json`): those that say
    something of where it stands; the command may still refuse (its refusal is shown)."""
    found: list[str] = []
    live = row["status"] in ("proposed", "confirmed")
    if live and row["pending"]:
        found += ["confirm", "decline"]
    if row.get("review_owed"):
        found.append("review")
    if row.get("kind") == "claim" and row.get("current"):
        found.append("assess")
    if live and "work" in row["labels"] and row["execution"] in OPEN:
        found += WORK_STEPS[row["execution"]]
    return found


WORK_STEPS: dict[str | None, list[str]] = {
    None: ["start", "report", "done"],
    "in-progress": ["block", "report", "done"],
    "blocked": ["unblock", "report", "done"],
}
