"""Stores and remotes merged by plain git: conflict markers, repeated events, odd segments.
`self doctor --repair` and `self sync` repair them without losing an event."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import msgspec

from service.adapters.store import Store
from service.adapters.sync import doctor, sync
from service.core.events.events import canonical
from tests.support.strategies import raw
from tests.support.sync_support import (
    FAST,
    append,
    event_ids,
    git,
    new_store,
    pair,
    remote_ids,
    same,
    status_clean,
    track,
)

SEGMENT = "projects/app/log/000000.jsonl"


def plain_git_merge(store: Store, remote: Path) -> None:
    """What a person does with git alone: fetch, merge (it conflicts), commit the markers."""
    git("fetch", "-q", str(remote), "main", cwd=store.root)
    git("-c", "user.name=p", "-c", "user.email=p@x", "merge", "FETCH_HEAD", cwd=store.root, check=False)
    git("-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qam", "merged by hand", cwd=store.root)


def test_doctor_finds_and_repairs_a_conflicted_merge(tmp_path: Path) -> None:
    path, a, b = pair(tmp_path)
    mine = append(b, 3, text="b")
    theirs = append(a, 2, text="a")
    sync(a, options=FAST)
    b.close()
    plain_git_merge(b, path)
    b = track(Store.open(b.root))
    data = (b.root / SEGMENT).read_bytes()
    assert b"<<<<<<<" in data and b">>>>>>>" in data
    report = doctor.examine(b)
    row = next(r for r in report.logs if r.log == "app")
    assert row.markers == 3 and row.damaged
    fixed = doctor.repair(b)
    row = next(r for r in fixed.logs if r.log == "app")
    assert (row.markers, row.duplicates, row.damaged) == (0, 0, False)
    assert {e.id for e in mine + theirs} <= set(event_ids(b))
    assert status_clean(b)
    sync(b, options=FAST)
    sync(a, options=FAST)
    same(a, b)
    assert Counter(remote_ids(path)) == Counter(event_ids(a))
    assert max(Counter(event_ids(a)).values()) == 1


def test_sync_repairs_a_merge_pushed_by_plain_git(tmp_path: Path) -> None:
    """Someone merged with plain git and pushed markers and a repeated event: the next
    sync removes them for everyone, and every event stays, once."""
    path, a, b = pair(tmp_path)
    append(a, 2)
    sync(a, options=FAST)
    sync(b, options=FAST)
    work = tmp_path / "plain"
    git("clone", "-q", "-b", "main", str(path), str(work))
    segment = work / SEGMENT
    lines = segment.read_bytes().splitlines(keepends=True)
    damaged = [b"<<<<<<< HEAD\n", *lines, lines[0], b"=======\n", b">>>>>>> other\n"]
    segment.write_bytes(b"".join(damaged))
    git("-c", "user.name=p", "-c", "user.email=p@x", "commit", "-qam", "bad merge", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    append(b, 1)
    summary = sync(b, options=FAST)
    assert summary.repaired == 4 and summary.pushed == 1 and not summary.rewritten
    sync(a, options=FAST)
    same(a, b)
    ids = remote_ids(path)
    assert len(ids) == len(set(ids)) == 4  # project.added, two from a, one from b
    assert b"<<<<<<<" not in (a.root / SEGMENT).read_bytes()


def test_doctor_lays_out_segments_and_keeps_unreadable_lines(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    append(a, 1500)
    folder = a.root / "projects/app/log"
    everything = b"".join(p.read_bytes() for p in sorted(folder.glob("*.jsonl")))
    for p in folder.glob("*.jsonl"):
        p.unlink()
    lines = everything.splitlines(keepends=True)
    (folder / "000000.jsonl").write_bytes(b"".join(lines[:700]) + b"not an event\n")
    (folder / "000001.jsonl").write_bytes(b"".join(lines[700:]) + lines[5])
    report = doctor.examine(a)
    row = next(r for r in report.logs if r.log == "app")
    assert not row.laid_out and row.duplicates == 1 and row.unreadable == 1 and report.uncommitted
    doctor.repair(a)
    sizes = [p.read_bytes().count(b"\n") for p in sorted(folder.glob("*.jsonl"))]
    assert sizes == [1000, 501]  # 1,500 events and the unreadable line
    assert b"not an event\n" in (folder / "000000.jsonl").read_bytes()
    assert Counter(event_ids(a)) == Counter({e: 1 for e in set(event_ids(a))})
    assert len(a.read("app").events) == 1500
    assert status_clean(a)
    assert doctor.examine(a).uncommitted == []


TORN = b'{"id":"01m8ny7b0c4k2x9z5q3w8e6r1t","origin":{"act'


def test_doctor_reports_a_torn_tail_and_repair_sets_it_aside(tmp_path: Path) -> None:
    a = new_store(tmp_path / "a")
    kept = append(a, 2)
    segment = a.root / SEGMENT
    whole = segment.read_bytes()
    segment.write_bytes(whole + TORN)
    row = next(r for r in doctor.examine(a).logs if r.log == "app")
    assert (row.torn, row.events, row.damaged) == (1, 2, True)
    fixed = doctor.repair(a)
    row = next(r for r in fixed.logs if r.log == "app")
    assert (row.torn, row.damaged) == (0, False)
    aside = a.root / ".local" / "quarantine" / "app.jsonl"
    assert fixed.set_aside == [str(aside)]
    assert aside.read_bytes() == TORN + b"\n"
    assert segment.read_bytes() == whole
    assert {e.id for e in kept} <= set(event_ids(a)) and a.read("app").quarantined == []
    assert status_clean(a) and doctor.examine(a).uncommitted == []


def test_doctor_sets_aside_a_torn_line_an_append_committed(tmp_path: Path) -> None:
    """A torn line that an earlier version committed in the middle of a log (the next append
    ended it with a newline and wrote after it): reported, and repaired without losing an event."""
    from service.adapters.store import gitcommit

    a = new_store(tmp_path / "a")
    append(a, 2)
    later = append(a, 1)
    segment = a.root / SEGMENT
    *first, last = segment.read_bytes().splitlines(keepends=True)
    data = b"".join([*first, TORN + b"\n", last])
    segment.write_bytes(data)
    gitcommit.commit_files(a.repo, {SEGMENT: data}, "append: as an older version did")
    row = next(r for r in doctor.examine(a).logs if r.log == "app")
    assert (row.torn, row.unreadable, row.events, row.damaged) == (1, 0, 3, True)
    doctor.repair(a)
    assert segment.read_bytes() == data.replace(TORN + b"\n", b"")
    assert later[0].id in event_ids(a) and a.read("app").quarantined == []
    assert (a.root / ".local" / "quarantine" / "app.jsonl").read_bytes() == TORN + b"\n"
    assert status_clean(a)


def test_doctor_repair_keeps_the_copy_every_read_folds(tmp_path: Path) -> None:
    """A hand edit put another copy of an event, in other bytes, before it: reads fold the
    copy the order rule picks, and the repair keeps that same copy, so the state is unchanged."""
    store = new_store(tmp_path / "s")
    (event,) = append(store, 1, text="kept")
    segment = store.root / SEGMENT
    lines = segment.read_bytes().splitlines(keepends=True)
    other = canonical(msgspec.structs.replace(event, payload=raw({"entity": event.id, "text": "zz edited"})))
    assert other > canonical(event)  # the edited copy loses, though it comes first in the file
    segment.write_bytes(b"".join([other, *lines]))
    before = store.state("app")[0]
    assert before.entities[event.id].text == "kept 0"
    assert [s.kind for s in before.signals] == ["conflicting-copies"]
    doctor.repair(store)
    assert segment.read_bytes().count(event.id.encode() + b'","origin"') == 1
    after = store.refold("app")[0]
    assert after.entities[event.id].text == "kept 0"
    assert status_clean(store)
