"""The session check of `tests/conftest.py` is not vacuous: a logged event that does not
validate fails it with its file and line; a line the decoder rejects is skipped, not passed;
and Superself's legacy events validate."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from service.core.events.events import Assertion, Origin, canonical, make
from tests.support.eventcheck import NOT_AN_EVENT, check_tree, problem
from tests.support.samples import SUPERSELF_SAMPLE

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE = SUPERSELF_SAMPLE / "store"
GOOD = canonical(
    make(
        "01m8ny75fdy93k3mh0rjgk54hg",
        "2026-11-30T09:57:45.069Z",
        "entity.confirmed",
        Origin("human", True),
        "app",
        Assertion(entity="01m8ny75fdy93k3mh0rjgk54hg", text="ship it", labels=("goal",)),
    )
)


def line(**change: object) -> bytes:
    event = json.loads(GOOD)
    event.update(change)
    return json.dumps(event).encode()


def test_a_typed_event_validates_and_a_broken_line_is_not_an_event() -> None:
    assert problem(GOOD.rstrip()) is None
    assert problem(b'{"id": "01m8ny75fdy93k3mh0rjgk54hg", "ts"') == NOT_AN_EVENT
    assert problem(b"<<<<<<< HEAD") == NOT_AN_EVENT


def test_an_event_the_decoder_reads_but_the_schema_refuses_is_a_failure() -> None:
    found = problem(line(id="e1"))
    assert found is not None and found != NOT_AN_EVENT and "id" in found


def test_a_payload_the_fold_cannot_read_must_not_validate_either() -> None:
    assert problem(line(type="entity.assessed", payload={"entity": "x"})) is None  # refused alike


def test_the_walk_names_file_and_line_and_counts_what_it_skipped(tmp_path: Path) -> None:
    segment = tmp_path / "store" / "projects" / "app" / "log" / "000000.jsonl"
    segment.parent.mkdir(parents=True)
    segment.write_bytes(GOOD + b"{not json\n" + line(id="e1") + b"\n")
    try:
        tally = check_tree(tmp_path)
        assert (tally.events, tally.skipped, tally.files) == (2, 1, 1)
        assert len(tally.failures) == 1 and tally.failures[0].startswith(f"{segment}:3: ")
    finally:
        segment.unlink()  # the session's own walk must not find it


def test_a_session_that_logged_a_bad_event_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest("from tests.conftest import every_written_event_validates  # noqa: F401\n")
    pytester.makepyfile(
        test_writes=textwrap.dedent(
            f"""
            def test_writes_a_bad_event(tmp_path):
                segment = tmp_path / "workspace" / "log" / "000000.jsonl"
                segment.parent.mkdir(parents=True)
                segment.write_bytes({GOOD!r} + {line(ts="yesterday")!r} + b"\\n")
            """
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    try:
        result.assert_outcomes(passed=1, errors=1)
        result.stdout.fnmatch_lines(["*1 logged events do not validate*", "*000000.jsonl:2: ts: *"])
    finally:
        for segment in pytester.path.rglob("log/*.jsonl"):
            segment.unlink()


def test_superself_legacy_events_validate() -> None:
    lines = [
        raw
        for path in sorted(CONFORMANCE.rglob("log.jsonl"))
        for raw in path.read_bytes().splitlines()
        if raw.strip()
    ]
    assert len(lines) >= 10
    assert [problem(raw) for raw in lines] == [None] * len(lines)


@pytest.mark.slow  # a pytest with two workers, each importing the product
def test_under_xdist_the_controller_holds_the_workers_sum_to_the_minimum(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers write four good events between them: the controller reports the sum and
    fails the run, whose minimum here is five. (The whole suite run with workers passes
    the same check with its real minimum.)"""
    pytester.makeconftest(
        textwrap.dedent(
            """
            from pathlib import Path

            import tests.conftest as suite
            from tests.conftest import *  # noqa: F403 (the fixture and the hooks)

            suite.SUITE = Path(__file__).resolve().parent  # this folder is the whole suite
            suite.MINIMUM_EVENTS = 5
            """
        )
    )
    pytester.makepyfile(
        test_writes=textwrap.dedent(
            f"""
            import pytest

            @pytest.mark.parametrize("n", range(4))
            def test_writes_a_good_event(tmp_path, n):
                segment = tmp_path / "workspace" / "log" / "000000.jsonl"
                segment.parent.mkdir(parents=True)
                segment.write_bytes({GOOD!r})
            """
        )
    )
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", str(pytester.path))
    try:
        assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()
        result.assert_outcomes(passed=4)
        result.stdout.fnmatch_lines(
            [
                "*event schema: 4 events in 4 log segments validated*",
                "*validated only 4 events across the workers*",
            ]
        )
    finally:
        for segment in pytester.path.rglob("log/*.jsonl"):
            segment.unlink()
