"""A malformed log line is quarantined, named by file and line, and never fatal."""

from __future__ import annotations

from selfrun import Store, describe


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
