"""A new user's mistakes with the service and with stores they may not write end in one line
that says what to do, never a traceback: a read-only store or data directory (reads answer as
on a writable one, writes are refused saying what is not writable, `self doctor` says so), a
port out of range or in use, a data directory that was never made (a mistyped `--data`).

Stores and data directories are made read-only with `chmod -R a-w` and `self` runs as a
user held to that (`tests/support/readonly.py`: as root, without root's capabilities)."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from tests.support.readonly import as_reader, files, read_only
from tests.support.selfrun import Store, base_env, describe, run_self
from tests.support.servers import free_port
from tests.support.serving import admin

READS = (("goal", "list"), ("status",), ("context", "--plain"), ("log",), ("state", "list"))
CANNOT = "read-only for you"


def one_line(proc: subprocess.CompletedProcess[str], code: int, *needles: str) -> None:
    """Exit `code`, nothing on stdout, one `self: …` line on stderr holding every needle."""
    assert proc.returncode == code, describe(proc)
    assert "Traceback" not in proc.stderr and proc.stdout == "", describe(proc)
    assert proc.stderr.startswith("self: ") and proc.stderr.count("\n") == 1, describe(proc)
    for needle in needles:
        assert needle in proc.stderr, describe(proc)


@pytest.fixture
def used(store: Store) -> Store:
    """A store with records in it, read once (its caches warm)."""
    store.add("goal", "ship the first release")
    store.add("work", "write the parser")
    store.ok("context", "--plain")
    return store


@pytest.mark.parametrize("caches", ["warm", "none"])
def test_reads_of_a_read_only_store_answer_as_on_a_writable_one(used: Store, caches: str) -> None:
    if caches == "none":  # as a fresh clone has none: nothing to read them from, none written
        shutil.rmtree(used.root / ".local" / "cache")
    expected = {args: used.ok(*args) for args in READS}
    if caches == "none":
        shutil.rmtree(used.root / ".local" / "cache")
    before = files(used.root)
    with read_only(used.root):
        for args in READS:
            proc = as_reader(args, used.env(), used.cwd)
            assert proc.returncode == 0 and proc.stderr == "", describe(proc)
            assert proc.stdout == expected[args], describe(proc)
    assert files(used.root) == before


WRITES = {
    "a record": ("goal", "another goal"),
    "a setting": ("alias", "set", "goal", "--priority", "3"),
    "a repair": ("doctor", "--repair"),
}


@pytest.mark.parametrize("case", list(WRITES))
def test_a_write_to_a_read_only_store_is_one_line_naming_what_and_writes_nothing(
    used: Store, case: str
) -> None:
    before = files(used.root)
    with read_only(used.root):
        proc = as_reader(WRITES[case], used.env(), used.cwd)
    one_line(proc, 1, str(used.root), CANNOT, "owns it")
    assert files(used.root) == before


def test_doctor_says_a_read_only_store_is_read_only(used: Store) -> None:
    with read_only(used.root):
        text = as_reader(("doctor",), used.env(), used.cwd)
        doc = as_reader(("doctor", "--json"), used.env(), used.cwd)
    assert text.returncode == 0 and CANNOT in text.stdout, describe(text)
    assert doc.returncode == 0, describe(doc)
    assert str(used.root) in json.loads(doc.stdout)["read_only"]
    assert json.loads(used.ok("doctor", "--json"))["read_only"] == []


def test_a_read_with_a_file_where_the_cache_goes_answers(used: Store) -> None:
    """The cache folder a file: the read answers from the store (its caches are not needed)."""
    expected = used.ok("context", "--plain")
    cache = used.root / ".local" / "cache"
    shutil.rmtree(cache)
    cache.write_text("in the way\n")
    assert used.ok("context", "--plain") == expected
    assert cache.read_text() == "in the way\n"


# --- the service's data directory -----------------------------------------------------------


@pytest.fixture
def data(tmp_path: Path) -> Path:
    """A data directory made by `self admin`: workspace `team`, user `ann`, a token."""
    root = tmp_path / "data"
    admin(root, "workspace", "add", "team")
    admin(root, "user", "add", "ann")
    admin(root, "token", "create", "ann", "--workspace", "team", "--role", "writer")
    return root


ADMIN_READS = (("user", "list"), ("token", "list"), ("workspace", "list"))


def test_reads_of_a_read_only_data_directory_answer(data: Path) -> None:
    expected = {args: admin(data, *args) for args in ADMIN_READS}
    before = files(data)
    with read_only(data):
        for args in ADMIN_READS:
            proc = as_reader(("admin", *args, "--data", str(data)), base_env())
            assert proc.returncode == 0 and proc.stdout == expected[args], describe(proc)
    assert files(data) == before


ADMIN_WRITES = {
    "a user": ("admin", "user", "add", "bob"),
    "a token": ("admin", "token", "create", "ann", "--workspace", "team", "--role", "reader"),
    "a workspace": ("admin", "workspace", "add", "two"),
    "a service": ("serve",),
}


@pytest.mark.parametrize("case", list(ADMIN_WRITES))
def test_a_write_to_a_read_only_data_directory_is_one_line(data: Path, case: str) -> None:
    args = ADMIN_WRITES[case]
    if args == ("serve",):
        args += ("--port", str(free_port()))
    before = files(data)
    with read_only(data):
        proc = as_reader((*args, "--data", str(data)), base_env(), timeout=15)
    one_line(proc, 1, str(data), CANNOT, "the data directory")
    assert files(data) == before


def test_a_data_directory_never_made_is_refused_and_not_made(tmp_path: Path) -> None:
    missing, other = tmp_path / "dta", tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("not a data directory\n")
    for folder in (missing, other):
        serve = ("serve", "--port", str(free_port()))
        for args in (("admin", "token", "list"), ("admin", "user", "add", "ann"), serve):
            proc = run_self((*args, "--data", str(folder)), base_env())
            one_line(proc, 1, str(folder), "not a service data directory", "self admin workspace add")
    assert not missing.exists()
    assert [p.name for p in other.iterdir()] == ["notes.txt"]


def test_a_data_directory_made_is_marked_and_one_from_before_the_mark_is_taken(data: Path) -> None:
    assert (data / "selfhub-data").is_file()
    (data / "selfhub-data").unlink()  # a data directory made before the marker was
    assert admin(data, "user", "list").split() == ["ann"]
    empty = data.parent / "volume"
    (empty / "lost+found").mkdir(parents=True)  # an empty folder made for one (a new volume)
    assert admin(empty, "user", "list") == ""


# --- self serve's port --------------------------------------------------------------------


@pytest.mark.parametrize("port", ["99999", "0", "-1", "65536"])
def test_a_port_out_of_range_is_one_line(data: Path, port: str) -> None:
    proc = run_self(("serve", "--data", str(data), "--port", port), base_env())
    one_line(proc, 1, "--port", port, "1<=x<=65535")


def test_a_port_in_use_is_one_human_line_after_the_log_line(data: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        proc = run_self(("serve", "--data", str(data), "--port", str(port)), base_env())
    assert proc.returncode == 3, describe(proc)
    assert "Traceback" not in proc.stderr, describe(proc)
    *logged, last = proc.stderr.splitlines()
    said = f"self: cannot listen on 127.0.0.1:{port}: the port is in use; stop what holds it"
    assert last.startswith(said) and "--port" in last, describe(proc)
    errors = [json.loads(line) for line in logged if line.startswith("{")]
    assert any(e["level"] == "error" and str(port) in e["event"] for e in errors), describe(proc)
