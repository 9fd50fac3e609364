"""A command given as CLI flags to the `self` command and the same command decoded from a
JSON body and run through the application layer (`service.app.execute`) append the same
events, ids and timestamps aside: one application layer, whichever front end asks.

Both run on copies of one store, so the records the commands name have the same ids in both;
the ids a command mints are compared by the order they appear in.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import msgspec
import pytest

from service.adapters.store import Store as OnDisk
from service.app import execute, locate
from service.core.commands.requests import AnyCommand
from service.core.events.events import as_dict
from tests.support.selfrun import PROJECT, Store


def _setup(store: Store) -> dict[str, str]:
    named = {
        "goal": store.add("goal", "ship the importer"),
        "work": store.add("work", "write the parser", "--criterion", "parses the sample"),
        "other": store.add("work", "write the docs"),
        "claim": store.add("claim", "the sample is representative"),
        "decision": store.add("decide", "parse with the stdlib"),
    }
    store.ok("work", "start", named["other"])
    return named


def _steps(n: dict[str, str]) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """(the CLI's arguments, the same command as a JSON body), in the order they run."""
    return [
        (
            ("goal", "ship it fast", "--why", "users wait"),
            {"command": "add", "preset": "goal", "text": "ship it fast", "why": "users wait"},
        ),
        (
            ("state", "add", "a note", "--label", "note", "--exposure", "index", "--scope", "workspace"),
            {
                "command": "add",
                "text": "a note",
                "labels": ["note"],
                "exposure": "index",
                "scope": "workspace",
            },
        ),
        (
            ("work", "add", "tidy up", "--reads", "src/*", "--writes", "src/a.py"),
            {
                "command": "add",
                "preset": "work",
                "text": "tidy up",
                "reads": ["src/*"],
                "writes": ["src/a.py"],
            },
        ),
        (
            ("claim", "the parser is fast", "--supports", n["claim"], "--evidence", "bench.txt"),
            {
                "command": "add",
                "preset": "claim",
                "text": "the parser is fast",
                "supports": [n["claim"]],
                "evidence": ["bench.txt"],
            },
        ),
        (
            ("decide", "use msgspec", "--choice", "msgspec", "--alternative", "json", "--proposed"),
            {
                "command": "add",
                "preset": "decide",
                "text": "use msgspec",
                "choice": "msgspec",
                "alternatives": ["json"],
                "proposed": True,
            },
        ),
        (
            ("state", "place", n["goal"], "--priority", "1"),
            {"command": "place", "record": n["goal"], "priority": 1},
        ),
        (
            ("state", "place", n["claim"], "--priority", "3", "--proposed"),
            {"command": "place", "record": n["claim"], "priority": 3, "proposed": True},
        ),
        (
            ("state", "decline", n["claim"], "--why", "not now"),
            {"command": "decline", "record": n["claim"], "why": "not now"},
        ),
        (("state", "cover", n["work"], "1"), {"command": "cover", "record": n["work"], "criterion": "1"}),
        (
            ("state", "link", n["work"], n["goal"], "--type", "member-of"),
            {"command": "link", "record": n["work"], "target": n["goal"], "link_type": "member-of"},
        ),
        (("work", "start", n["work"]), {"command": "start", "record": n["work"], "unit": True}),
        (
            ("work", "started", n["work"], "--pid", "4242"),
            {"command": "run-started", "record": n["work"], "pid": 4242},
        ),
        (
            ("work", "block", n["work"], "--on", "review"),
            {"command": "block", "record": n["work"], "unit": True, "on": "review"},
        ),
        (("work", "unblock", n["work"]), {"command": "unblock", "record": n["work"], "unit": True}),
        (
            ("report", n["work"], "parsed", "--commit", "c0ffee1"),
            {"command": "report", "record": n["work"], "text": "parsed", "commit": "c0ffee1"},
        ),
        (
            ("work", "exited", n["work"], "--code", "0"),
            {"command": "run-exited", "record": n["work"], "code": 0, "unit": True},
        ),
        (
            ("work", "done", n["work"], "--why", "shipped"),
            {"command": "done", "record": n["work"], "unit": True, "why": "shipped"},
        ),
        (("work", "restore", n["work"]), {"command": "restore", "record": n["work"], "unit": True}),
        (
            ("work", "retire", n["other"], "--why", "moot"),
            {"command": "retire", "record": n["other"], "unit": True, "why": "moot"},
        ),
        (
            ("claim", "assess", n["claim"], "--state", "accepted"),
            {"command": "assess", "record": n["claim"], "state": "accepted"},
        ),
        (
            ("decide", "revoke", n["decision"], "--why", "slow"),
            {"command": "revoke", "record": n["decision"], "why": "slow"},
        ),
        (
            ("goal", "retract", n["goal"], "--why", "done elsewhere"),
            {"command": "retract", "record": n["goal"], "why": "done elsewhere"},
        ),
        (
            ("project", "add", "docs", "--desc", "the manual"),
            {"command": "project-add", "slug": "docs", "description": "the manual"},
        ),
        (
            ("project", "archive", "docs", "--why", "merged"),
            {"command": "project-archive", "slug": "docs", "why": "merged"},
        ),
        (("project", "restore", "docs"), {"command": "project-restore", "slug": "docs"}),
    ]


def _shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events without ids and timestamps; ids minted by the command as their order."""
    minted = {e["id"]: f"new{i}" for i, e in enumerate(events)}
    text = json.dumps([{k: v for k, v in e.items() if k not in ("id", "ts")} for e in events], sort_keys=True)
    for raw, placeholder in minted.items():
        text = text.replace(raw, placeholder)
    return json.loads(text)


def test_cli_flags_and_json_bodies_append_the_same_events(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("SELF_ACTOR", "SELF_SESSION", "SELF_USER", "SELF_CLOCK_OFFSET_MS", "SELF_WORKSPACE"):
        monkeypatch.delenv(name, raising=False)
    named = _setup(store)
    twin = tmp_path / "twin"
    shutil.copytree(store.root, twin, symlinks=True)
    for args, body in _steps(named):
        by_cli = store.json(*args)["events"]
        command = msgspec.json.decode(json.dumps(body), type=AnyCommand)
        by_library = [as_dict(e) for e in execute(locate(str(twin), PROJECT, cwd=tmp_path), command)]
        assert by_cli, args
        assert _shape(by_cli) == _shape(by_library), args
    kept = {store.root: OnDisk(store.root).local.pids(), twin: OnDisk(twin).local.pids()}
    assert all(pids[named["work"]].pid == 4242 for pids in kept.values()), kept  # never in the log
