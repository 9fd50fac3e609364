"""Ordinary mistakes end in one line that says what to do, exit 1, never a traceback, and
write nothing: a bad path, a read-only store, a file of the wrong kind, a nonsense number."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.selfrun import Store, base_env, describe, run_self

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


def one_line_exit_1(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 1, nothing on stdout, exactly one `self: …` line on stderr holding every needle."""
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stderr, describe(proc)
    assert proc.stdout == "", describe(proc)
    assert proc.stderr.startswith("self: ") and proc.stderr.count("\n") == 1, describe(proc)
    for needle in needles:
        assert needle in proc.stderr, describe(proc)


@pytest.fixture(scope="module")
def records(module_store: Store) -> dict[str, str]:
    return {
        "goal": module_store.add("goal", "ship the first release"),
        "work": module_store.add("work", "write the parser"),
    }


# (args, environment additions, what the line must say)
BAD_VALUES: dict[str, tuple[tuple[str, ...], dict[str, str | None], tuple[str, ...]]] = {
    "empty --at on show": (("state", "show", "{goal}", "--at", ""), {}, ("--at", "event id")),
    "empty --at on list": (("state", "list", "--at", ""), {}, ("--at", "event id")),
    "blank --at": (("state", "list", "--at", "  "), {}, ("--at", "event id")),
    "unknown exposure in search": (("search", "--exposure", "bogus"), {}, ("bogus", "full, index, search")),
    "zero tries": (("sync", "--tries", "0"), {}, ("--tries 0", "from 1 to")),
    "negative tries": (("sync", "--tries", "-3"), {}, ("--tries -3", "from 1 to")),
    "tries from the environment": (("sync",), {"SELF_SYNC_TRIES": "0"}, ("SELF_SYNC_TRIES", "from 1 to")),
    "zero timeout": (("sync", "--timeout", "0"), {}, ("--timeout 0", "seconds")),
    "negative timeout": (("sync", "--timeout", "-1"), {}, ("--timeout -1", "seconds")),
    "negative timeout from the environment": (
        ("sync",),
        {"SELF_SYNC_TIMEOUT": "-5"},
        ("SELF_SYNC_TIMEOUT", "seconds"),
    ),
    "nan timeout": (("sync", "--timeout", "nan"), {}, ("--timeout", "seconds")),
    "zero deadline": (("sync", "--deadline", "0"), {}, ("--deadline 0", "seconds")),
    "deadline from the environment": (
        ("sync",),
        {"SELF_SYNC_DEADLINE": "-1"},
        ("SELF_SYNC_DEADLINE=-1", "seconds"),
    ),
    "timeout that is no number": (
        ("sync",),
        {"SELF_SYNC_TIMEOUT": "soon"},
        ("SELF_SYNC_TIMEOUT", "not a number"),
    ),
    "clone with zero timeout": (
        ("clone", "git://127.0.0.1:9/x.git", "{tmp}/c", "--timeout", "0"),
        {},
        ("--timeout 0",),
    ),
    "negative pid": (("work", "started", "{work}", "--pid", "-1"), {}, ("--pid -1", "process id")),
    "zero pid": (("work", "started", "{work}", "--pid", "0"), {}, ("--pid 0", "process id")),
    "huge exit code": (
        ("work", "exited", "{work}", "--code", "99999999999"),
        {},
        ("--code 99999999999", "255"),
    ),
    "work start on a goal": (
        ("work", "start", "{goal}"),
        {},
        ("is a goal, not a work unit", "self state start"),
    ),
    "work done on a goal": (
        ("work", "done", "{goal}", "--report", "shipped"),
        {},
        ("is a goal, not a work unit", "self state done"),
    ),
    "work block on a goal": (("work", "block", "{goal}"), {}, ("is a goal, not a work unit",)),
    "work exited on a goal": (
        ("work", "exited", "{goal}", "--code", "0"),
        {},
        ("is a goal, not a work unit",),
    ),
}


@pytest.mark.parametrize("case", list(BAD_VALUES))
def test_a_nonsense_value_is_refused_saying_the_allowed_range(
    module_store: Store, records: dict[str, str], tmp_path: Path, case: str
) -> None:
    args, env_extra, needles = BAD_VALUES[case]
    before = module_store.files()
    given = {**records, "tmp": str(tmp_path)}
    proc = module_store.run(*(a.format(**given) for a in args), env_extra=env_extra)
    one_line_exit_1(proc, *(n.format(**given) for n in needles))
    assert module_store.files() == before, "a refused value changed the store"
    assert not (tmp_path / "c").exists()


def test_the_work_verbs_still_act_on_work(store: Store) -> None:
    work = store.add("work", "write the parser")
    store.ok("work", "start", work)
    store.ok("work", "started", work, "--pid", str(os.getpid()))
    store.ok("work", "exited", work, "--code", "255")
    store.ok("work", "done", work, "--report", "parser written", "--commit", "a" * 40)
    goal = store.add("goal", "ship it")
    store.ok("state", "start", goal)


# --- paths and files ------------------------------------------------------------------------------


def test_init_on_a_file_or_under_one_is_one_line(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    on_file = run_self(("init", str(afile)), base_env(), cwd=tmp_path)
    one_line_exit_1(on_file, str(afile), "not a folder")
    under = run_self(("init", str(afile / "sub")), base_env(), cwd=tmp_path)
    one_line_exit_1(under, str(afile), "not a folder")
    assert afile.read_text() == "not a folder\n"


def test_init_where_no_folder_can_be_made_is_one_line(tmp_path: Path) -> None:
    target = "/proc/self/no-store-here"  # procfs refuses a new folder, to root as well
    proc = run_self(("init", target), base_env(), cwd=tmp_path)
    one_line_exit_1(proc, target, "cannot create")


BROKEN_LOCAL: dict[str, tuple[str, ...]] = {
    "write": ("idea", "a fine idea"),
    "context": ("context", "--plain"),
    "list": ("state", "list"),
}


@pytest.mark.parametrize("case", list(BROKEN_LOCAL))
def test_a_store_whose_local_folder_cannot_be_written_is_one_line(store: Store, case: str) -> None:
    """`.local/` made a plain file: every process fails to write there, root included."""
    local = store.root / ".local"
    for path in sorted(local.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    local.rmdir()
    local.write_text("in the way\n")
    before = store.files()
    proc = store.run(*BROKEN_LOCAL[case])
    one_line_exit_1(proc, ".local")
    assert store.files() == before


IN_THE_WAY: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "write with the lock a folder": ("lock", True, ("idea", "a fine idea")),
}  # a read with the cache folder a file answers: tests/e2e/test_read_only.py


@pytest.mark.parametrize("case", list(IN_THE_WAY))
def test_a_machine_file_in_the_way_is_one_line(store: Store, case: str) -> None:
    """A path under `.local/` of the wrong kind fails every process, root included, the way a
    read-only store does: the filesystem refuses, and the line names the path."""
    name, as_folder, args = IN_THE_WAY[case]
    store.ok("context", "--plain")
    path = store.root / ".local" / name
    if path.is_dir():
        for inner in sorted(path.rglob("*"), reverse=True):
            inner.rmdir() if inner.is_dir() else inner.unlink()
        path.rmdir()
    else:
        path.unlink(missing_ok=True)
    path.mkdir() if as_folder else path.write_text("in the way\n")
    before = store.files()
    proc = store.run(*args)
    one_line_exit_1(proc, str(path), "may write there")
    assert store.files() == before


@pytest.mark.skipif(ROOT, reason="root writes through chmod; the cases above cover the path as root")
@pytest.mark.parametrize("case", ["write", "context"])
def test_a_read_only_store_is_one_line(store: Store, case: str) -> None:
    """Every folder of the store read-only: a write is refused before it appends anything;
    context either reads (its caches are warm) or fails in one line, never a traceback."""
    store.ok("context", "--plain")
    before = store.files()
    folders = [store.root, *(p for p in store.root.rglob("*") if p.is_dir())]
    modes = {p: p.stat().st_mode for p in folders}
    for path in folders:
        path.chmod(0o555)
    try:
        proc = store.run(*BROKEN_LOCAL[case])
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    if case == "write" or proc.returncode != 0:
        one_line_exit_1(proc, "ermission denied")
    else:
        assert proc.stdout.startswith("# app"), describe(proc)
    assert store.files() == before


def test_importing_a_binary_file_as_docket_is_one_line(store: Store, tmp_path: Path) -> None:
    binary = tmp_path / "ledger.jsonl"
    binary.write_bytes(bytes(range(256)) * 8)
    before = store.files()
    proc = store.run("import", "docket", str(binary))
    one_line_exit_1(proc, str(binary), "UTF-8")
    assert store.files() == before


EXPORT_TARGETS: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "a missing folder": (lambda tmp: tmp / "missing" / "out.parquet", ("no folder",)),
    "a folder": (lambda tmp: tmp, ("is a folder",)),
}


@pytest.mark.parametrize("case", list(EXPORT_TARGETS))
def test_exporting_parquet_to_a_bad_place_is_one_line(store: Store, tmp_path: Path, case: str) -> None:
    pytest.importorskip("pyarrow")
    make, needles = EXPORT_TARGETS[case]
    target = make(tmp_path)
    proc = store.run("export", "parquet", str(target))
    one_line_exit_1(proc, str(target), *needles)
    assert not (tmp_path / "missing").exists()
