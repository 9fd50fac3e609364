"""Session-wide checks: every event the tests wrote validates against the exported schema.

At the end of the session every store under pytest's base temporary folder (where every
test's `tmp_path`, the e2e template and module stores, and the `self` commands of the e2e
tests write) is walked by `tests/support/eventcheck.py`; a line that does not validate fails
the session with its file and line. A run of the whole suite must have validated at least
`MINIMUM_EVENTS` events, so a walk that finds nothing cannot pass. Under pytest-xdist each
worker walks its own base folder and fails on its own bad lines; the controller adds up
what the workers validated and holds the sum to the same minimum.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.eventcheck import TEMPDIRS, Tally, check_tree
from tests.support.selfrun import MODE

pytest_plugins = ["pytester"]

MINIMUM_EVENTS = 25_000  # a whole run validates about 57,000
SUITE = Path(__file__).resolve().parent
TALLY = pytest.StashKey[Tally]()
SHORT = pytest.StashKey[str]()  # the controller's verdict when the workers validated too few
WORKER_TALLY = "event_schema_tally"  # a worker's counts in its workeroutput


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--self-process",
        action="store_true",
        help="run every `self` command of the tests as a real process, not just those marked `process`",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `process` (or every test, with --self-process) runs `self` as a real
    process; the others run it in this process (tests/support/selfrun.py)."""
    marked = item.get_closest_marker("process") is not None
    MODE.process = marked or bool(item.config.getoption("--self-process"))


def whole_suite(config: pytest.Config) -> bool:
    """The run selects every test: the suite's folder (or the root) and no -k, -m or deselection."""
    option = config.option
    if option.keyword or option.markexpr or option.deselect or getattr(option, "lf", False):
        return False
    roots = {SUITE, SUITE.parent}
    return bool(config.args) and all(
        (Path(config.invocation_params.dir) / arg.split("::")[0]).resolve() in roots for arg in config.args
    )


def is_worker(config: pytest.Config) -> bool:
    """This process is a pytest-xdist worker (it runs a share of the tests)."""
    return hasattr(config, "workerinput")


def has_workers(config: pytest.Config) -> bool:
    """This process is the controller of pytest-xdist workers (it runs no test itself)."""
    return config.pluginmanager.has_plugin("dsession")


def too_few(tally: Tally, where: str) -> str:
    return (
        f"the whole suite validated only {tally.events} events {where}: "
        "the walk no longer finds the stores the tests write"
    )


@pytest.fixture(scope="session", autouse=True)
def every_written_event_validates(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    yield
    base = tmp_path_factory.getbasetemp()
    tally = request.config.stash[TALLY] = check_tree(base)
    tally.add(TEMPDIRS)
    if is_worker(request.config):  # the controller adds the workers' counts up
        request.config.workeroutput[WORKER_TALLY] = [tally.events, tally.skipped, tally.files]
    shown = "\n".join(tally.failures[:50])
    more = len(tally.failures) - 50
    assert not tally.failures, (
        f"{len(tally.failures)} logged events do not validate against `self export jsonschema`:\n"
        f"{shown}" + (f"\n… and {more} more" if more > 0 else "")
    )
    if whole_suite(request.config) and not is_worker(request.config):
        assert tally.events >= MINIMUM_EVENTS, too_few(tally, f"under {base}")


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """pytest-xdist, in the controller: a worker ended; add what its walk validated."""
    counts = getattr(node, "workeroutput", {}).get(WORKER_TALLY)
    if counts is not None:
        events, skipped, files = counts
        node.config.stash.setdefault(TALLY, Tally()).add(Tally(events, skipped, files))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With workers: the whole suite fails unless the workers together validated the minimum."""
    config = session.config
    if not has_workers(config) or not whole_suite(config):
        return
    tally = config.stash.setdefault(TALLY, Tally())
    if tally.events < MINIMUM_EVENTS:
        config.stash[SHORT] = too_few(tally, "across the workers")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    tally = terminalreporter.config.stash.get(TALLY, None)
    if tally is not None:
        terminalreporter.write_line(
            f"event schema: {tally.events} events in {tally.files} log segments validated, "
            f"{tally.skipped} lines skipped as not events"
        )
    short = terminalreporter.config.stash.get(SHORT, None)
    if short is not None:
        terminalreporter.write_line(f"FAILED event schema: {short}", red=True)
