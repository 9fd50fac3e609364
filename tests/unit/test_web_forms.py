"""The web view's forms without a server: each action's form parsed into the command value
`POST …/commands` takes, the add form's kinds, the actions a record's page offers, the
session's form token, and history values in words."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from service.core.commands import requests as rq
from service.core.errors import Invalid
from service.core.fold.state import Entity, Pending
from service.server.web import actions, inbox, session
from service.server.web.actions import ActionForm, AddForm
from service.server.web.errors import StaleForm
from service.server.web.templating import plain

RECORD = "01m94h5z798xtwftmdd169s8r9"


@pytest.mark.parametrize(
    ("action", "form", "command"),
    [
        ("confirm", ActionForm(), rq.Confirm(record=RECORD)),
        ("decline", ActionForm(), rq.Decline(record=RECORD)),
        ("decline", ActionForm(why=" too risky "), rq.Decline(record=RECORD, why="too risky")),
        ("review", ActionForm(why=""), rq.Review(record=RECORD)),
        (
            "assess",
            ActionForm(state="disputed", why="slow"),
            rq.Assess(record=RECORD, state="disputed", why="slow"),
        ),
        ("start", ActionForm(), rq.Start(record=RECORD, unit=True)),
        ("block", ActionForm(on="the license"), rq.Block(record=RECORD, on="the license", unit=True)),
        ("unblock", ActionForm(), rq.Unblock(record=RECORD, unit=True)),
        (
            "report",
            ActionForm(text="drawn", commit="abc1234"),
            rq.Report(record=RECORD, text="drawn", commit="abc1234"),
        ),
        ("done", ActionForm(), rq.Done(record=RECORD, unit=True)),
        (
            "done",
            ActionForm(artifact="dist/app.whl"),
            rq.Done(record=RECORD, artifact="dist/app.whl", unit=True),
        ),
    ],
)
def test_each_action_is_the_command_the_api_takes(
    action: str, form: ActionForm, command: rq.AnyCommand
) -> None:
    made = actions.command_of(action, RECORD, form)
    assert made == command
    assert rq.decode(msgspec.json.encode(made)) == made, "the same value a JSON body decodes to"


def test_an_unknown_action_or_kind_is_refused_saying_the_choices() -> None:
    with pytest.raises(Invalid, match="not an action: use one of confirm, decline"):
        actions.command_of("retract", RECORD, ActionForm())
    with pytest.raises(Invalid, match="choose one of goal, decision, claim, question, idea, work"):
        actions.added(AddForm(kind="roadmap", text="x"))


@pytest.mark.parametrize(("kind", "preset"), [("decision", "decide"), ("work", "work"), ("goal", "goal")])
def test_a_kind_adds_with_its_preset(kind: str, preset: str) -> None:
    assert actions.added(AddForm(kind=kind, text="t", why=" ")) == rq.Add(text="t", preset=preset)


def row(**given: Any) -> dict[str, Any]:
    return {"status": "confirmed", "pending": False, "labels": ["idea"], "execution": None} | given


@pytest.mark.parametrize(
    ("shown", "offered"),
    [
        (row(status="proposed", pending=True), ["confirm", "decline"]),
        (row(pending=True), ["confirm", "decline"]),  # a placement waits: confirmed or declined
        (row(status="retracted", pending=False), []),
        (row(kind="decision", review_owed=[{"ground": "x"}]), ["review"]),
        (row(kind="claim", current=True), ["assess"]),
        (row(kind="claim", current=False), []),
        (row(labels=["work"]), ["start", "report", "done"]),
        (row(labels=["work"], execution="in-progress"), ["block", "report", "done"]),
        (row(labels=["work"], execution="blocked"), ["unblock", "report", "done"]),
        (row(labels=["work"], execution="done"), []),
        (row(kind="question"), []),
    ],
)
def test_a_record_page_offers_what_says_something(shown: dict[str, Any], offered: list[str]) -> None:
    assert actions.offered(shown) == offered


class Asked:
    """What the form token reads of a request: its cookies."""

    def __init__(self, cookie: str | None) -> None:
        self.cookies = {session.COOKIE: cookie} if cookie else {}


def test_the_form_token_is_the_sessions_own() -> None:
    mine, other = Asked("shs_" + "a" * 43), Asked("shs_" + "b" * 43)
    token = session.form_token(mine)  # type: ignore[arg-type]
    assert token and "a" * 8 not in token, "it says nothing of the session's id"
    session.check_form(mine, token)  # type: ignore[arg-type]
    for asked, given in ((other, token), (mine, ""), (mine, token[:-1] + "0"), (Asked(None), token)):
        with pytest.raises(StaleForm):
            session.check_form(asked, given)  # type: ignore[arg-type]
    assert session.form_token(Asked(None)) is None  # type: ignore[arg-type]


def test_history_values_read_as_words() -> None:
    assert plain(["decision"]) == "decision"
    assert plain([{"type": "depends-on", "target": RECORD}]) == f"depends-on {RECORD}"
    assert plain({"ground": "a", "reason": "disputed"}) == "ground a, reason disputed"
    assert plain(40) == "40" and plain("text") == "text"


def test_a_placement_waiting_says_what_it_moves() -> None:
    record = Entity(
        RECORD, "web", "t", ["goal"], [], [], [], "full", 0, "project", "confirmed", RECORD, RECORD
    )
    assert inbox.moves(record, Pending("e", exposure="index", why="room")) == "exposure full → index (room)"
    assert inbox.moves(record, Pending("e", priority=5)) == "priority 0 → 5"
