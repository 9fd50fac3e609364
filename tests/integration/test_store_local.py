"""Machine-local facts: the pid ledger and liveness, checkout links, the .selfhub marker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from service.adapters.store import CorruptFile, Store, find_marker, liveness, write_marker
from service.adapters.store.local import Machine, PidRecord, this_machine


def test_a_recorded_pid_of_this_process_is_running(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    record = store.local.record_pid("w1", os.getpid(), "app")
    assert store.local.pids() == {"w1": record}
    assert record.hostname == this_machine().hostname
    assert liveness(record) == "running"
    assert Store.open(tmp_path).local.pids()["w1"].project == "app"


def test_a_finished_process_has_exited(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    record = store.local.record_pid("w2", proc.pid, "app")
    proc.wait()
    assert liveness(record) == "exited"
    store.local.forget_pid("w2")
    assert store.local.pids() == {}


def test_records_from_elsewhere_or_before_a_reboot_are_not_trusted() -> None:
    here = this_machine()
    mine = PidRecord(os.getpid(), "app", here.hostname, here.boot_id)
    assert liveness(msgspec.structs.replace(mine, hostname=here.hostname + "-other")) == "other-machine"
    rebooted = Machine(here.hostname, "another-boot")
    assert liveness(mine, rebooted) == ("stale" if here.boot_id else "running")
    reused = msgspec.structs.replace(mine, start_ticks=-1)
    assert liveness(reused) == ("stale" if Path("/proc/self/stat").exists() else "running")


def test_the_ledger_stays_out_of_git(tmp_path: Path) -> None:
    from dulwich import porcelain

    store = Store.init(tmp_path)
    store.local.record_pid("w1", os.getpid(), "app")
    store.local.link("app", tmp_path)
    status = porcelain.status(str(tmp_path))
    assert status.untracked == []


def test_links_find_the_project_of_a_path_or_its_parents(tmp_path: Path) -> None:
    store = Store.init(tmp_path / "ws")
    checkout = tmp_path / "code" / "app"
    (checkout / "src" / "deep").mkdir(parents=True)
    store.local.link("app", checkout)
    assert store.local.linked_project(checkout / "src" / "deep") == "app"
    assert store.local.linked_project(tmp_path / "code") is None
    assert store.local.links() == {str(checkout.resolve()): "app"}
    store.local.unlink(checkout)
    assert store.local.linked_project(checkout) is None


def test_a_marker_is_found_from_below(tmp_path: Path) -> None:
    checkout = tmp_path / "app"
    (checkout / "a" / "b").mkdir(parents=True)
    marker = write_marker(checkout, "app")
    assert json.loads(marker.read_text()) == {"project": "app"}
    assert find_marker(checkout / "a" / "b") == "app"
    assert find_marker(checkout) == "app"
    assert find_marker(tmp_path) is None


def test_a_broken_marker_says_how_to_fix_it(tmp_path: Path) -> None:
    from cli.problems import adapter_message

    (tmp_path / ".selfhub").write_text("{oops")
    with pytest.raises(CorruptFile, match="is not a selfhub marker") as broken:
        find_marker(tmp_path)
    assert adapter_message(broken.value).endswith("; run `self project link <slug>` here to rewrite it")
    (tmp_path / ".selfhub").write_text('{"project": "../x"}')
    with pytest.raises(CorruptFile):
        find_marker(tmp_path)


def test_a_corrupt_ledger_is_reported(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    (tmp_path / ".local" / "local.json").write_text("[1, 2")
    with pytest.raises(CorruptFile, match="delete it"):
        store.local.pids()
