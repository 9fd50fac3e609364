"""The store on disk and in git: init/open, segments, the append gate, quarantine, commits."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
from dulwich.objects import Blob, Commit, Tree
from dulwich.repo import Repo

from service.adapters.store import AlreadyAStore, NotAStore, Store, StoreError
from service.core.commands.config import Caps, WorkspaceConfig
from service.core.errors import Invalid, Refused
from service.core.events.events import Assertion, Event, Origin, ReportAdded, canonical, make
from service.core.fold.fold import fold_all

ORIGIN = Origin("agent", False)


def proposals(tx_ids: list[str], project: str = "app") -> list[Event]:
    return [
        make(
            i,
            "2026-11-30T09:57:45.069Z",
            "entity.proposed",
            ORIGIN,
            project,
            Assertion(entity=i, text=f"record {n} about the sync design"),
        )
        for n, i in enumerate(tx_ids)
    ]


def append_n(store: Store, n: int, log: str = "app") -> list[Event]:
    with store.transaction(log) as tx:
        events = proposals(tx.next_ids(n), log)
        tx.append(events)
    return events


def tree_files(repo: Repo, commit_id: bytes | None = None) -> dict[str, bytes]:
    """Every file in a commit's tree: path → content."""
    commit = repo[commit_id or repo.refs[b"refs/heads/main"]]
    assert isinstance(commit, Commit)
    out: dict[str, bytes] = {}

    def walk(tree_id: bytes, prefix: str) -> None:
        tree = repo[tree_id]
        assert isinstance(tree, Tree)
        for entry in tree.iteritems():
            name = prefix + entry.path.decode()
            obj = repo[entry.sha]
            if isinstance(obj, Tree):
                walk(entry.sha, name + "/")
            else:
                assert isinstance(obj, Blob)
                out[name] = obj.data

    walk(commit.tree, "")
    return out


def history(repo: Repo) -> list[Commit]:
    return [entry.commit for entry in repo.get_walker()]


# --- init / open ------------------------------------------------------------------------


def test_init_creates_a_store_on_main(tmp_path: Path) -> None:
    store = Store.init(tmp_path / "ws")
    repo = Repo(str(store.root))
    assert repo.refs.read_ref(b"HEAD") == b"ref: refs/heads/main"
    assert store.config() == WorkspaceConfig()
    assert (store.root / "workspace" / "log").is_dir()
    assert ".local/" in (store.root / ".git" / "info" / "exclude").read_text().splitlines()
    assert set(tree_files(repo)) == {"workspace.json", "workspace/log/000000.jsonl"}
    assert len(history(repo)) == 1
    assert store.logs() == [""]


def test_init_refuses_an_existing_store(tmp_path: Path) -> None:
    Store.init(tmp_path)
    with pytest.raises(AlreadyAStore, match="already a selfhub workspace"):
        Store.init(tmp_path)
    assert issubclass(AlreadyAStore, StoreError)


def test_open_names_what_to_do_when_there_is_no_store(tmp_path: Path) -> None:
    with pytest.raises(NotAStore) as info:
        Store.open(tmp_path)
    assert info.value.code == "not-a-store" and "no workspace.json and .git there" in str(info.value)
    assert "self init" not in str(info.value)  # the CLI adds what to run (tests/e2e/test_error_flags.py)
    Store.init(tmp_path / "ws")
    assert Store.open(tmp_path / "ws").root == (tmp_path / "ws").resolve()


def test_save_config_writes_and_commits(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    config = WorkspaceConfig(caps=Caps(full_tokens=500), context_budget=2000)
    store.save_config(config)
    assert Store.open(tmp_path).config() == config
    repo = Repo(str(tmp_path))
    assert tree_files(repo)["workspace.json"] == (tmp_path / "workspace.json").read_bytes()
    assert len(history(repo)) == 2
    store.save_config(config)  # unchanged: no empty commit
    assert len(history(repo)) == 2


def test_logs_lists_the_workspace_and_every_project(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    append_n(store, 1, "zeta")
    append_n(store, 1, "alpha")
    assert store.logs() == ["", "alpha", "zeta"]


# --- segments ---------------------------------------------------------------------------


def segment_lines(store: Store, log: str = "app") -> dict[str, int]:
    folder = store.root / "projects" / log / "log"
    return {p.name: p.read_bytes().count(b"\n") for p in sorted(folder.iterdir())}


def test_append_rolls_segments_at_exactly_1000(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    append_n(store, 999)
    assert segment_lines(store) == {"000000.jsonl": 999}
    append_n(store, 1)
    assert segment_lines(store) == {"000000.jsonl": 1000}
    append_n(store, 1501)
    assert segment_lines(store) == {"000000.jsonl": 1000, "000001.jsonl": 1000, "000002.jsonl": 501}
    events = store.read("app").events
    assert len(events) == 2501
    assert [e.id for e in events] == sorted(e.id for e in events)


def test_one_append_crossing_a_boundary_is_one_commit(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    append_n(store, 990)
    append_n(store, 20)
    repo = Repo(str(tmp_path))
    commits = history(repo)
    assert len(commits) == 3
    assert commits[0].message == b"append: 20 events to projects/app\n"
    files = tree_files(repo)
    for name in ("000000.jsonl", "000001.jsonl"):
        assert files[f"projects/app/log/{name}"] == (tmp_path / "projects/app/log" / name).read_bytes()


def test_two_stores_given_the_same_events_hold_the_same_files(tmp_path: Path) -> None:
    first = Store.init(tmp_path / "a")
    events = append_n(first, 2300)
    second = Store.init(tmp_path / "b")
    for start, end in ((0, 7), (7, 1000), (1000, 1999), (1999, 2300)):
        with second.transaction("app") as tx:
            tx.append(events[start:end])
    folder = Path("projects/app/log")
    names = sorted(p.name for p in (first.root / folder).iterdir())
    assert names == ["000000.jsonl", "000001.jsonl", "000002.jsonl"]
    for name in names:
        assert (first.root / folder / name).read_bytes() == (second.root / folder / name).read_bytes()


def test_lines_are_canonical_bytes(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    events = append_n(store, 3)
    data = (tmp_path / "projects/app/log/000000.jsonl").read_bytes()
    assert data == b"".join(canonical(e) for e in events)


# --- the append gate --------------------------------------------------------------------


def snapshot_files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*.jsonl")
        if ".git" not in p.parts and ".local" not in p.parts
    }


@pytest.mark.parametrize("case", ["type", "payload", "project", "order", "not-an-id"])
def test_the_gate_refuses_a_bad_event_and_writes_nothing(tmp_path: Path, case: str) -> None:
    store = Store.init(tmp_path)
    first = append_n(store, 2)
    before, head = snapshot_files(tmp_path), store.head()
    with store.transaction("app") as tx:
        new_id = tx.next_ids(3)[1]
    event = proposals([new_id])[0]
    bad = {
        "type": msgspec.structs.replace(event, type="goal.set"),
        "payload": msgspec.structs.replace(event, payload=msgspec.Raw(b'{"entity":5}')),
        "project": msgspec.structs.replace(event, project="other"),
        "order": msgspec.structs.replace(event, id=first[0].id),
        "not-an-id": msgspec.structs.replace(event, id="ULID-1"),
    }[case]
    with pytest.raises(Invalid), store.transaction("app") as tx:
        good = proposals(tx.next_ids(1))
        tx.append([*good, bad] if case != "order" else [bad, *good])
    assert snapshot_files(tmp_path) == before
    assert store.head() == head


def test_the_gate_runs_the_sanitize_gate(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    before = snapshot_files(tmp_path)
    with pytest.raises(Refused), store.transaction("app") as tx:
        first, second = tx.next_ids(2)
        leak = make(
            second, tx.now(), "report.added", ORIGIN, "app", ReportAdded("ran it"), refs={"pid": 4242}
        )
        tx.append([*proposals([first]), leak])
    assert snapshot_files(tmp_path) == before


@contextlib.contextmanager
def held_fresh(lock: Path) -> Iterator[None]:
    """A ref lock another git process keeps holding (its mtime stays fresh), until the block ends."""
    lock.write_bytes(b"")
    done = threading.Event()

    def touch() -> None:
        while not done.wait(0.1):
            os.utime(lock)

    toucher = threading.Thread(target=touch)
    toucher.start()
    try:
        yield
    finally:
        done.set()
        toucher.join()
        lock.unlink()


def test_a_failed_commit_leaves_the_log_as_it_was(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    append_n(store, 999)
    before, head = snapshot_files(tmp_path), store.head()
    lock = tmp_path / ".git" / "refs" / "heads" / "main.lock"
    with held_fresh(lock), pytest.raises(StoreError, match=r"main\.lock"):
        append_n(store, 3)
    assert snapshot_files(tmp_path) == before
    assert not (tmp_path / "projects/app/log/000001.jsonl").exists()
    append_n(store, 3)
    assert store.head() != head and len(store.read("app").events) == 1002


def test_transaction_state_follows_its_own_appends(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    with store.transaction("app") as tx:
        assert tx.state.events == 0
        tx.append(proposals(tx.next_ids(2)))
        tx.append(proposals(tx.next_ids(1)))
        assert tx.state.events == 3
        assert tx.state == fold_all(store.read("app").events)
        assert len(tx.commits) == 2


def test_now_is_iso_utc_with_milliseconds(tmp_path: Path) -> None:
    with Store.init(tmp_path).transaction("") as tx:
        stamp = tx.now()
    assert len(stamp) == 24 and stamp.endswith("Z") and stamp[10] == "T" and stamp[19] == "."


# --- quarantine ---------------------------------------------------------------------------


def test_malformed_lines_are_quarantined_with_file_and_line(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    events = append_n(store, 4)
    segment = tmp_path / "projects/app/log/000000.jsonl"
    lines = segment.read_bytes().splitlines(keepends=True)
    broken = [
        lines[0],
        b"{not json\n",
        lines[1],
        b"\n",
        b'{"id":"x"}\n',
        lines[2],
        b"   \n",
        lines[3],
    ]
    segment.write_bytes(b"".join(broken))
    log = store.read("app")
    assert [e.id for e in log.events] == [e.id for e in events]
    file = "projects/app/log/000000.jsonl"
    assert [(q.file, q.line) for q in log.quarantined] == [(file, 2), (file, 4), (file, 5), (file, 7)]
    assert all(q.reason for q in log.quarantined)
    state, quarantined = store.state("app")
    assert quarantined == log.quarantined
    assert state == fold_all(events)


def test_an_unterminated_last_line_is_reported(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    append_n(store, 2)
    segment = tmp_path / "projects/app/log/000000.jsonl"
    with open(segment, "ab") as handle:
        handle.write(b'{"id":"01m8ny7')
    log = store.read("app")
    assert len(log.events) == 2
    assert [(q.line, "unterminated" in q.reason) for q in log.quarantined] == [(3, True)]
    assert store.state("app")[1] == log.quarantined


TORN = "01m8ny7b0c4k2x9z5q3w8e6r1t"
TORN_TAILS = {
    "cut in the id": b'{"id":"01m8ny7',
    "cut after the id": b'{"id":"' + TORN.encode() + b'","origin":{"actor":"ag',
    "a last line that does not decode": b'{"id":"' + TORN.encode() + b'","payl\n',
    "not an event at all": b"{not json\n",
}


@pytest.mark.parametrize("tail", TORN_TAILS.values(), ids=TORN_TAILS.keys())
def test_a_torn_tail_is_set_aside_before_the_next_append_commits(tmp_path: Path, tail: bytes) -> None:
    """A crash during a write leaves a torn tail; the next append moves it to .local/ and
    commits whole lines only, so no later sync can publish it."""
    store = Store.init(tmp_path)
    before = append_n(store, 2)
    segment = tmp_path / "projects/app/log/000000.jsonl"
    whole = segment.read_bytes()
    with open(segment, "ab") as handle:
        handle.write(tail)
    kept = tmp_path / ".local" / "quarantine" / "app.jsonl"
    assert store.state("app")[0] == fold_all(before)  # a fold cache made with the torn tail
    with pytest.warns(UserWarning, match=str(kept)):
        after = append_n(store, 1)
    assert store.state("app") == (fold_all(before + after), [])
    assert kept.read_bytes() == tail if tail.endswith(b"\n") else tail + b"\n"
    log = store.read("app")
    assert (log.events, log.quarantined) == (before + after, [])
    assert segment.read_bytes() == whole + canonical(after[0])
    committed = tree_files(Repo(str(tmp_path)))["projects/app/log/000000.jsonl"]
    assert committed == segment.read_bytes()
    store.close()


def test_a_log_without_a_torn_tail_appends_without_a_warning(tmp_path: Path) -> None:
    import warnings

    store = Store.init(tmp_path)
    append_n(store, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        append_n(store, 1)
    assert not (tmp_path / ".local" / "quarantine").exists()
    store.close()


# --- git ------------------------------------------------------------------------------------


def test_commits_hold_the_files_and_never_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Store.init(tmp_path)
    append_n(store, 1200)
    store.state("app")
    store.local.record_pid("w1", 1, "app")
    monkeypatch.setenv("SELF_AUTHOR", "Ada <ada@example.org>")
    append_n(store, 5, "web")
    repo = Repo(str(tmp_path))
    commits = history(repo)
    assert commits[0].author == b"Ada <ada@example.org>"
    assert commits[1].author == b"selfhub <selfhub@localhost>"
    assert commits[0].message == b"append: 5 events to projects/web\n"
    for commit in commits:
        assert not any(path.startswith(".local") for path in tree_files(repo, commit.id))
    files = tree_files(repo)
    for path in snapshot_files(tmp_path):
        assert files[path] == (tmp_path / path).read_bytes()
    assert (tmp_path / ".local" / "cache").is_dir()


def test_each_append_is_one_commit_on_the_last(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    heads = [store.head()]
    for _ in range(3):
        append_n(store, 2)
        heads.append(store.head())
    repo = Repo(str(tmp_path))
    for parent, child in itertools.pairwise(heads):
        commit = repo[child.encode()]
        assert isinstance(commit, Commit) and commit.parents == [parent.encode()]


def test_git_sees_a_clean_worktree(tmp_path: Path) -> None:
    from dulwich import porcelain

    store = Store.init(tmp_path)
    append_n(store, 1001)
    store.state("app")
    status = porcelain.status(str(tmp_path))
    assert status.unstaged == [] and status.untracked == []
    assert status.staged == {"add": [], "delete": [], "modify": []}


def test_linked_checkout_paths_are_machine_local_facts(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    note = "see /srv/build/ws7/notes for the numbers"

    def report(text: str) -> None:
        with store.transaction("app") as tx:
            tx.append([make(tx.next_ids(1)[0], tx.now(), "report.added", ORIGIN, "app", ReportAdded(text))])

    report(note)
    store.local.link("app", Path("/srv/build/ws7"))
    with pytest.raises(Refused):
        report(note)
    assert len(store.read("app").events) == 1


def test_init_refuses_a_folder_holding_git_or_settings(tmp_path: Path) -> None:
    Repo.init(str(tmp_path / "repo"), mkdir=True).close()
    with pytest.raises(StoreError, match="git repository"):
        Store.init(tmp_path / "repo")
    (tmp_path / "half").mkdir()
    (tmp_path / "half" / "workspace.json").write_text("{}")
    with pytest.raises(StoreError, match=r"no \.git"):
        Store.init(tmp_path / "half")


def test_a_transaction_cannot_be_used_after_it_ends(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    with store.transaction("app") as tx:
        event_id = tx.next_ids(1)[0]
    with pytest.raises(StoreError, match="ended"):
        tx.append(proposals([event_id]))
    assert store.read("app").events == []


# --- git lock files ---------------------------------------------------------------------------


def plant(path: Path, age: float) -> None:
    """A lock file as a crashed git write leaves it, `age` seconds old."""
    path.write_bytes(b"")
    when = time.time() - age
    os.utime(path, (when, when))


def test_a_stale_ref_lock_is_removed_by_the_next_write(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    append_n(store, 1)
    lock = tmp_path / ".git" / "refs" / "heads" / "main.lock"
    plant(lock, 3600)
    started = time.monotonic()
    written = append_n(store, 1)
    assert time.monotonic() - started < 1.5  # an old lock is not waited for
    assert not lock.exists()
    assert [e.id for e in store.read("app").events][-1] == written[0].id
    assert tree_files(Repo(str(tmp_path)))["projects/app/log/000000.jsonl"].endswith(canonical(written[0]))
    store.close()


def test_the_note_of_a_held_git_lock_is_emptied_after_a_write_and_read_after_a_kill(tmp_path: Path) -> None:
    """A write notes the git lock file it takes in `.git/selfhub-lock` and empties the note
    after (the file stays); the next write removes the lock a note still names (a write
    killed while holding it), and an empty note names nothing to remove."""
    from service.adapters.store import gitcommit

    store = Store.init(tmp_path)
    append_n(store, 1)
    note = tmp_path / ".git" / gitcommit.MARKER
    assert note.read_bytes() == b""
    assert gitcommit.recover(tmp_path / ".git") == []
    lock = tmp_path / ".git" / "refs" / "heads" / "main.lock"
    plant(lock, 0)  # held by a write killed just now: too young to be stale
    note.write_text("refs/heads/main.lock")
    with pytest.warns(gitcommit.StaleLock):
        written = append_n(store, 1)
    assert not lock.exists() and note.read_bytes() == b""
    assert [e.id for e in store.read("app").events][-1] == written[0].id
    store.close()


def test_the_clock_holds_the_last_id_written(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    for _ in range(3):
        written = append_n(store, 2)
        assert (tmp_path / ".local" / "clock").read_bytes() == written[-1].id.encode() + b"\n"
    store.close()


def test_a_ref_lock_released_meanwhile_is_waited_for(tmp_path: Path) -> None:
    store = Store.init(tmp_path)
    lock = tmp_path / ".git" / "refs" / "heads" / "main.lock"
    plant(lock, 0)
    timer = threading.Timer(0.3, lock.unlink)
    timer.start()
    try:
        append_n(store, 1)
    finally:
        timer.join()
    assert len(tree_files(Repo(str(tmp_path)))["projects/app/log/000000.jsonl"].splitlines()) == 1
    store.close()


def test_the_events_holding_an_id_give_each_record_the_history_the_whole_log_gives(tmp_path: Path) -> None:
    """`Store.holding` decodes only the segments whose bytes hold an id: for every record
    (first, across segment ends, last, named by later links and supersessions) the history
    it gives is the one the whole log gives."""
    from service.core.events.events import Link, Linked, Superseded
    from service.core.fold.history import events_of

    WHEN = "2026-11-30T09:57:45.069Z"
    store = Store.init(tmp_path)
    made = append_n(store, 2500)  # three segments
    with store.transaction("app") as tx:
        ids = tx.next_ids(3)
        tx.append(
            [
                make(
                    ids[0],
                    WHEN,
                    "entity.linked",
                    ORIGIN,
                    "app",
                    Linked(made[0].id, Link("relates", made[1999].id)),
                ),
                make(
                    ids[1],
                    WHEN,
                    "entity.linked",
                    ORIGIN,
                    "app",
                    Linked(made[2400].id, Link("relates", made[5].id)),
                ),
                make(
                    ids[2],
                    WHEN,
                    "entity.superseded",
                    ORIGIN,
                    "app",
                    Superseded(made[999].id, by=made[1000].id),
                ),
            ]
        )
    every = store.read("app").events
    for record in [made[0], made[5], made[999], made[1000], made[1999], made[2400], made[-1]]:
        assert events_of(record.id, store.holding("app", record.id)) == events_of(record.id, every)
    assert len(events_of(made[5].id, store.holding("app", made[5].id))) == 2
    assert store.holding("app", "no such text") == []
    store.close()


def test_events_after_an_id_are_every_later_one_when_an_import_appended_older_ids(tmp_path: Path) -> None:
    """An import appends events with their own, older ids after the native ones, so the last
    segments hold ids before those of the segments ahead of them. `read_after` still gives
    every event after an id, as the whole log does, for ids before, inside and after the
    imported run, and `Store.newest` the events with the greatest ids; both after the last
    segment grew, and with a line not in canonical bytes; and a new process (its greatest
    ids read from the cache file) gives the same."""
    from service.adapters.store import segments
    from service.adapters.store.segments import read_after
    from service.core.events import ids

    store = Store.init(tmp_path)
    native = append_n(store, 1500)  # two segments
    old = [ids.encode(ids.decode(native[0].id) - 10_000 + n) for n in range(1800)]
    assert store.import_events("app", proposals(old)) == 1800  # appended: segments 2 to 4 hold older ids
    whole = sorted(store.read("app").events, key=lambda e: e.id)
    for after in [
        None,
        old[0],
        old[900],
        old[-1],
        native[0].id,
        native[700].id,
        native[1200].id,
        native[-1].id,
    ]:
        expected = [e.id for e in whole if after is None or e.id > after]
        assert [e.id for e in read_after(tmp_path, "app", after)] == expected, after
    for n in [1, 5, 999, 1000, 1001, 2500, 3300, 4000]:  # the greatest ids, wherever they sit
        assert [e.id for e in store.newest("app", n)] == [e.id for e in whole[-n:]], n
    more = append_n(store, 3)  # the last segment grew since its greatest id was kept
    assert [e.id for e in read_after(tmp_path, "app", native[-1].id)] == [e.id for e in more]
    segment = tmp_path / "projects/app/log/000000.jsonl"  # a line not in canonical bytes: decoded
    lines = segment.read_bytes().splitlines(keepends=True)
    segment.write_bytes(b"".join([lines[0].replace(b'{"id":', b'{ "id":'), *lines[1:]]))
    assert [e.id for e in read_after(tmp_path, "app", old[-1])] == [e.id for e in [*native, *more]]
    assert [e.id for e in store.newest("app", 4)] == [native[-1].id, *(e.id for e in more)]
    kept = dict(segments._GREATEST[tmp_path / "projects/app/log"])
    segments._GREATEST.clear()  # as a new process: the greatest ids from the cache file
    assert segments._load_greatest(tmp_path, "app") == kept, "the file holds every segment's"
    assert [e.id for e in read_after(tmp_path, "app", native[-2].id)] == [
        native[-1].id,
        *(e.id for e in more),
    ]
    store.close()
