"""Commands as data: the CLI's builder and a JSON body give equal values; every command has
a handler; the model's rule says which log each goes to."""

from __future__ import annotations

import typing

import msgspec
import pytest

from cli.records import preset_command
from service.core.commands import requests as rq
from service.core.commands.handle import HANDLERS
from service.core.errors import Invalid


def test_a_preset_add_from_flags_equals_the_json_body() -> None:
    from_flags = preset_command(
        "decide",
        "use msgspec",
        why="fast",
        supersedes=None,
        exposure=None,
        priority=None,
        criterion=[],
        target=None,
        demote=[],
        at_workspace=True,
        proposed=True,
        choice="msgspec",
        alternatives=("json",),
    )
    body = b"""{"command": "add", "preset": "decide", "text": "use msgspec", "why": "fast",
        "scope": "workspace", "proposed": true, "choice": "msgspec", "alternatives": ["json"]}"""
    assert rq.decode(body) == from_flags
    assert msgspec.json.decode(msgspec.json.encode(from_flags), type=rq.AnyCommand) == from_flags


def test_every_command_has_a_handler_and_a_log() -> None:
    kinds = typing.get_args(rq.AnyCommand)
    assert set(kinds) == set(HANDLERS)
    tags = [k.__struct_config__.tag for k in kinds]
    assert len(set(tags)) == len(tags)


def test_the_log_rule() -> None:
    assert rq.log_of(rq.Add(text="x", scope="workspace")) == "workspace"
    assert rq.log_of(rq.Add(text="x", scope="workspace", demote=("01",))) == "project"
    assert rq.log_of(rq.Add(text="x", scope="workspace", supersedes="01")) == "project"
    assert rq.log_of(rq.Add(text="x")) == "project"
    assert rq.log_of(rq.Done(record="01")) == "record"
    assert rq.log_of(rq.ProjectAdd(slug="docs")) == "workspace"


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{", "malformed"),
        (b'{"command": "fly"}', "invalid-value"),
        (b'{"command": "done"}', "invalid-value"),
    ],
)
def test_a_body_that_is_no_command_is_refused(body: bytes, code: str) -> None:
    with pytest.raises(Invalid) as refused:
        rq.decode(body)
    assert refused.value.code == code
