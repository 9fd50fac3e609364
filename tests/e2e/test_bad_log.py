"""A malformed log line is quarantined, named by file and line, and never fatal."""

from __future__ import annotations

from pathlib import Path

from tests.support.selfrun import Store, base_env, describe, run_self


def test_malformed_line_is_located_and_the_rest_still_reads(store: Store) -> None:
    store.ok("idea", "kept before the damage")
    store.ok("decide", "still here")
    segment = store.log_file()
    with segment.open("ab") as handle:
        handle.write(b"{not json\n")
    line = segment.read_bytes().count(b"\n")
    where = f"{segment.relative_to(store.root).as_posix()}:{line}"

    for command in ("status", "fold"):
        proc = store.run(command)
        assert proc.returncode == 0, describe(proc)
        assert where in proc.stdout + proc.stderr, f"`self {command}` does not name {where}:\n" + describe(
            proc
        )

    listed = store.run("state", "list")
    assert listed.returncode == 0, describe(listed)
    for text in ("kept before the damage", "still here"):
        assert text in listed.stdout, listed.stdout
    assert "2 live" in listed.stdout, listed.stdout


TORN = b'{"id":"01m8ny7b0c4k2x9z5q3w8e6r1t","origin":{"actor":"hu'


def test_a_torn_line_is_set_aside_by_the_next_write_and_never_published(store: Store, tmp_path: Path) -> None:
    """A crash cut a write short: doctor names it, the next write moves it to .local/ and says
    so, and a remote (and every clone of it) never sees it."""
    store.ok("idea", "kept before the crash")
    segment = store.log_file()
    with segment.open("ab") as handle:
        handle.write(TORN)
    found = store.json("doctor")
    row = next(r for r in found["logs"] if r["log"] == "app")
    assert (row["torn"], row["damaged"]) == (1, True), found
    assert "needs repair" in store.ok("doctor")

    wrote = store.run("idea", "written after the crash")
    assert wrote.returncode == 0, describe(wrote)
    kept = store.root / ".local" / "quarantine" / "app.jsonl"
    assert str(kept) in wrote.stderr and "Traceback" not in wrote.stderr, describe(wrote)
    assert kept.read_bytes() == TORN + b"\n"
    assert "needs repair" not in store.ok("doctor")

    store.ok("remote", "add", str(tmp_path / "team.git"), "--init")
    store.ok("sync")
    cloned = run_self(("clone", str(tmp_path / "team.git"), str(tmp_path / "bob")), base_env())
    assert cloned.returncode == 0, describe(cloned)
    bob = Store(tmp_path / "bob", "app")
    assert [row["quarantined"] for row in bob.json("fold")["logs"]] == [[], []]
    assert TORN not in bob.log_file().read_bytes()
    assert "kept before the crash" in bob.ok("state", "list") and "written after" in bob.ok("state", "list")


def test_doctor_repair_sets_a_torn_line_aside(store: Store) -> None:
    store.ok("idea", "kept before the crash")
    segment = store.log_file()
    whole = segment.read_bytes()
    with segment.open("ab") as handle:
        handle.write(TORN)
    repaired = store.ok("doctor", "--repair")
    kept = store.root / ".local" / "quarantine" / "app.jsonl"
    assert str(kept) in repaired, repaired
    assert kept.read_bytes() == TORN + b"\n" and segment.read_bytes() == whole
    assert "needs repair" not in store.ok("doctor")
    assert [row["quarantined"] for row in store.json("fold")["logs"]] == [[], []]
