"""The workspace store: a git repository of event logs, with a machine-local `.local/`.

`Store` opens or creates one, reads logs and their folded state (through the fold cache),
and runs transactions: under the store lock, fresh state in, ids out, events appended
through the append gate and committed.

A checkout (`checkout`, `advance`) writes only the store's layout paths of a commit
(`_safe_path`), so nothing a remote's tree names outside it reaches the disk.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from service.adapters.store import cache, clock, durable, layout, segments
from service.adapters.store.errors import (
    AlreadyAStore,
    CorruptFile,
    NotAFolder,
    NotAStore,
    NotEmpty,
    NotWritable,
    StoreError,
)
from service.adapters.store.local import Local
from service.adapters.store.lock import DEFAULT_TIMEOUT, StoreLock
from service.adapters.store.segments import Log, Quarantine, read_log
from service.core.commands.config import WorkspaceConfig, check_settings
from service.core.events.events import Event
from service.core.fold.state import State

if TYPE_CHECKING:
    from dulwich.objects import ObjectID
    from dulwich.repo import Repo

    from service.adapters.store.hot import Hot
    from service.adapters.store.unit import Unit

EXCLUDE_LINE = ".local/"


class Store:
    """One workspace store on disk. Use `Store.init` or `Store.open`."""

    def __init__(self, root: Path, *, lock_timeout: float = DEFAULT_TIMEOUT) -> None:
        self.root = Path(root).resolve()
        self.local_dir = self.root / layout.LOCAL_DIR
        self.local = Local(self.local_dir)
        self._lock = StoreLock(self.local_dir / "lock", lock_timeout, on_acquire=self._recover)
        self._repo: Repo | None = None

    # --- opening ----------------------------------------------------------------------

    @classmethod
    def init(cls, path: Path, *, lock_timeout: float = DEFAULT_TIMEOUT) -> Store:
        """Create a store at `path`: a git repo on branch main with the default settings."""
        from dulwich.repo import Repo

        from service.adapters.store import gitcommit

        root = Path(path)
        has_config, has_git = (root / layout.CONFIG_FILE).exists(), (root / ".git").exists()
        if has_config and has_git:
            raise AlreadyAStore(root)
        if has_config or has_git:
            what = "a git repository" if has_git else "a workspace.json but no .git"
            raise NotEmpty(f"{root} already holds {what}")
        _make_folder(root)
        Repo.init(str(root), default_branch=b"main").close()
        store = cls(root, lock_timeout=lock_timeout)
        store._prepare_local()
        workspace_log = layout.log_dir(layout.WORKSPACE_LOG)
        files = {
            layout.CONFIG_FILE: _encode_config(WorkspaceConfig()),
            f"{workspace_log}/{layout.segment_name(0)}": b"",
        }
        with store.locked():
            for name, data in files.items():
                layout.atomic_write(store.root / name, data)
            gitcommit.commit_files(store.repo, files, "init: selfhub workspace")
            gitcommit.update_index(store.repo, list(files))
        return store

    @classmethod
    def open(cls, path: Path, *, lock_timeout: float = DEFAULT_TIMEOUT) -> Store:
        """The store at `path`; NotAStore when there is none."""
        root = Path(path)
        if not (root / layout.CONFIG_FILE).is_file() or not (root / ".git").exists():
            raise NotAStore(root)
        layout.check_format(root)
        store = cls(root, lock_timeout=lock_timeout)
        store._prepare_local()
        if store._checkout_mark.exists():
            store._finish_checkout()
        return store

    def _prepare_local(self) -> None:
        """Make `.local/` and keep it out of git through .git/info/exclude."""
        if self.local_dir.exists() and not self.local_dir.is_dir():
            raise NotAFolder(
                f"{self.local_dir} is a file, not a folder: selfhub keeps this machine's lock and "
                "caches there; move the file away and retry"
            )
        self.local_dir.mkdir(exist_ok=True)
        exclude = self.root / ".git" / "info" / "exclude"
        text = exclude.read_text("utf-8") if exclude.exists() else ""
        if EXCLUDE_LINE not in text.splitlines():
            exclude.parent.mkdir(parents=True, exist_ok=True)
            joint = "" if text.endswith("\n") or not text else "\n"
            exclude.write_text(f"{text}{joint}{EXCLUDE_LINE}\n")

    def _recover(self) -> None:
        """Just under the store lock: remove the git lock file a killed write left."""
        from service.adapters.store import gitcommit

        for lock in gitcommit.recover(Path(self.repo.controldir())):
            message = f"removed .git/{lock}, left by a selfhub write that was killed"
            warnings.warn(message, gitcommit.StaleLock, stacklevel=2)

    @property
    def repo(self) -> Repo:
        if self._repo is None:
            from dulwich.repo import Repo  # git's own objects: what a read of the state never needs

            self._repo = Repo(str(self.root))
            self._repo.object_store.fsync_object_files = True  # a ref never names a lost object
            # git's own level for loose objects (core.looseCompression): a commit re-writes its
            # segment's whole blob, which zlib's default level takes three times as long over
            self._repo.object_store.loose_compression_level = 1
        return self._repo

    def close(self) -> None:
        if self._repo is not None:
            self._repo.close()
            self._repo = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- settings ---------------------------------------------------------------------

    def config(self) -> WorkspaceConfig:
        path = self.root / layout.CONFIG_FILE
        try:
            return msgspec.json.decode(path.read_bytes(), type=WorkspaceConfig)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise CorruptFile(f"{path} is not valid workspace settings ({exc}); fix or restore it") from exc

    def save_config(self, config: WorkspaceConfig) -> None:
        """Write workspace.json and commit it; settings holding a machine-local or secret
        fact are refused (Unsanitary) before a byte is written."""
        from service.adapters.store import gitcommit

        check_settings(config, self.local_facts())
        data = _encode_config(config)
        with self.locked():
            layout.atomic_write(self.root / layout.CONFIG_FILE, data)
            gitcommit.commit_files(self.repo, {layout.CONFIG_FILE: data}, "config: workspace.json")
            gitcommit.update_index(self.repo, [layout.CONFIG_FILE])

    # --- reading ----------------------------------------------------------------------

    def logs(self) -> list[str]:
        """ "" (the workspace log) and every project slug with a log folder, sorted."""
        return [layout.WORKSPACE_LOG, *layout.project_logs(self.root)]

    def read(self, log: str) -> Log:
        """Every event of a log in file order, with the lines that could not be read."""
        layout.check_key(log)
        return read_log(self.root, log)

    def holding(self, log: str, text: str) -> list[Event]:
        """The events of a log whose line holds `text` (an id), reading only the segments
        that hold it: a record's history without decoding the whole log."""
        layout.check_key(log)
        return segments.holding(self.root, log, text)

    def newest(self, log: str, n: int) -> list[Event]:
        """The `n` events of a log with the greatest ids, in id order, decoding only the
        segments that hold them."""
        layout.check_key(log)
        return segments.newest(self.root, log, n)

    def state(self, log: str) -> tuple[State, list[Quarantine]]:
        """The folded state of a log (through the fold cache) and its quarantined lines."""
        layout.check_key(log)
        return cache.folded(self.root, log)

    def refold(self, log: str) -> tuple[State, list[Quarantine]]:
        """Fold a log from nothing, bypassing every cache (what `self fold` measures)."""
        layout.check_key(log)
        with cache.paused_gc():
            read = read_log(self.root, log)
            return cache.fold_log(read.events), read.quarantined

    def hot(self, log: str) -> Hot:
        """The slice of a log's state that context renders, without loading the rest."""
        from service.adapters.store import hot

        layout.check_key(log)
        return hot.hot(self.root, log)

    def head(self) -> str | None:
        """The commit refs/heads/main points at."""
        from service.adapters.store import gitcommit

        commit = gitcommit.head(self.repo)
        return None if commit is None else commit.decode("ascii")

    # --- writing ----------------------------------------------------------------------

    @contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """Hold the store's exclusive lock (re-entrant within this Store)."""
        with self._lock.held(timeout):
            yield

    @contextmanager
    def transaction(self, log: str, *, timeout: float | None = None) -> Iterator[Transaction]:
        """Under the lock: fresh state of `log`, new ids, and appends through the gate."""
        layout.check_key(log)
        self._check_writable(log)
        with self.locked(timeout):
            transaction = Transaction(self, log)
            try:
                yield transaction
            finally:
                transaction.closed = True

    @contextmanager
    def unit(self) -> Iterator[Unit]:
        """Under the lock: a unit of work over every log (`unit.py`), committed as one commit
        when it closes without an error."""
        from service.adapters.store.unit import Unit  # a write's only: `self context` stays light

        with self.locked():
            states: dict[str, State] = {}

            def state_of(log: str) -> State:
                if log not in states:
                    states[log] = self.state(log)[0]
                return states[log]

            def apply(log: str, events: list[Event]) -> None:
                cache.advance(state_of(log), events)

            unit = Unit(self, state_of, apply)
            yield unit
            for log in unit.lines:
                self._check_writable(log)
            if unit.events:
                self.write_lines(unit.lines, [e.id for e in unit.events])

    def _check_writable(self, log: str) -> None:
        """Refuse a write up front when a folder it writes in is read-only for this user:
        nothing half-written (a line appended, its commit refused)."""
        for path in self.unwritable([log]):
            raise NotWritable(path)

    def unwritable(self, logs: Sequence[str] = ()) -> list[Path]:
        """The folders and files a write (to `logs`) needs that this user may not write: empty
        for a store it may write. Root passes every check but a read-only mount's."""
        root = self.root
        paths = [root, root / ".git", root / ".git" / "objects", self.local_dir, self.local_dir / "lock"]
        for log in logs:
            folder = root / layout.log_dir(log)
            paths += [folder, folder.parent]
        found: list[Path] = []
        for path in dict.fromkeys(paths):
            wanted = os.W_OK | os.X_OK if path.is_dir() else os.W_OK
            if path.exists() and not os.access(path, wanted) and path not in found:
                found.append(path)
        return found

    def import_events(self, log: str, events: list[Event]) -> int:
        """Append events with their own ids (sorted, known ids skipped); returns how many."""
        from service.adapters.store import append as gate

        layout.check_key(log)
        with self.locked():
            written = gate.import_events(self.root, self.repo, log, events, self.local_facts())
            clock.observe(self.clock_file, (e.id for e in written))
        return len(written)

    def check(self, log: str, events: list[Event], local: tuple[str, ...]) -> list[bytes]:
        """The canonical lines of new events bound for `log`, each through the append gate's
        checks (`local`: `local_facts()`, read once per batch); the first refusal raises."""
        from service.adapters.store import append as gate

        layout.check_key(log)
        return [gate.check(log, event, local) for event in events]

    def write_lines(
        self, lines: dict[str, list[bytes]], issued: list[str], *, index: bool = True
    ) -> tuple[str, list[str]]:
        """Commit checked lines (`check`) of several logs as one commit, under the lock; the
        id clock moves past `issued`. Returns the commit id and the files it changed; with
        `index=False` `.git/index` is left for `update_index`."""
        from service.adapters.store import append as gate

        for log in lines:
            layout.check_key(log)
        count = sum(len(v) for v in lines.values())
        where = ", ".join(layout.display(log) for log in sorted(lines))
        with self.locked():
            done = gate.write_lines(
                self.root, self.repo, lines, f"append: {count} events to {where}", index=index
            )
            clock.observe(self.clock_file, issued, durable=False)
        return done

    def update_index(self, paths: list[str]) -> None:
        """Bring `.git/index` up to date for files written with `write_lines(index=False)`."""
        from service.adapters.store import gitcommit

        with self.locked():
            gitcommit.update_index(self.repo, paths)

    def local_facts(self) -> tuple[str, ...]:
        """Strings no synced event may hold: the home folder, this store's and checkouts' paths."""
        facts = {str(self.root)}
        with contextlib.suppress(RuntimeError, KeyError):
            facts.add(str(Path.home()))
        with contextlib.suppress(CorruptFile):  # a broken ledger must not block every write
            facts.update(self.local.links())
        # a one-level path ("/data") also occurs inside relative paths ("src/data"): skip it
        return tuple(sorted(f for f in facts if Path(f).is_absolute() and len(Path(f).parts) > 2))

    def observe(self, ids: list[str]) -> None:
        """Raise the clock past ids seen elsewhere (fetched, imported)."""
        with self.locked():
            clock.observe(self.clock_file, ids)

    # --- replacing the working files with a commit (sync) ------------------------------

    def checkout(self, commit: str, expected: str | None, message: str = "sync") -> list[str]:
        """Make `commit` the store's: main moves from `expected` to it by compare-and-swap
        (RefMoved if it is elsewhere), then the working files become byte-equal to its tree,
        `.git/index` follows, and the caches of every log that changed other than by
        appending are dropped. Returns the logs whose files changed.

        A crash in between is finished by the next `Store.open` (`.local/checkout` names
        the commit being checked out).
        """
        from dulwich.objects import ObjectID

        from service.adapters.store import gitcommit

        target = ObjectID(commit.encode("ascii"))
        with self.locked():
            old = None if expected is None else ObjectID(expected.encode("ascii"))
            layout.atomic_write(self._checkout_mark, target + b"\n")
            try:
                if gitcommit.head(self.repo) != target:
                    gitcommit.move_branch(self.repo, old, target, message)
            except BaseException:
                self._checkout_mark.unlink(missing_ok=True)
                raise
            changed = self._materialize(target)
            self._checkout_mark.unlink(missing_ok=True)
        return changed

    def advance(self, commit: str, expected: str, message: str) -> tuple[list[str], list[str]]:
        """`checkout` for a store written only through this process (a hosted store): its
        working files are `expected`'s, so only the paths the two trees differ in are read
        and written. The objects the caller added, then the checkout mark, are made durable
        by one flush of the filesystem before main moves, the files by another after;
        `.git/index` is left for `update_index`. Returns the logs whose files changed and the
        files written."""
        from dulwich.objects import ObjectID

        from service.adapters.store import gitcommit

        target, old = ObjectID(commit.encode("ascii")), ObjectID(expected.encode("ascii"))
        with self.locked():
            batched = durable.available()
            layout.atomic_write(self._checkout_mark, target + b"\n", durable=not batched)
            if batched:
                durable.flush(self.root)
            try:
                gitcommit.move_branch(self.repo, old, target, message)
            except BaseException:
                self._checkout_mark.unlink(missing_ok=True)
                raise
            from service.adapters.store import treediff

            changes = treediff.changed_files(self.repo, old, target)
            wanted = {path: new for path, (_, new) in changes.items() if new is not None}
            gone = [path for path, (_, new) in changes.items() if new is None]
            changed, written = self._write_files(wanted, gone, fsync=not batched, index=False)
            if batched:
                durable.flush(self.root)
            self._checkout_mark.unlink(missing_ok=True)
        return changed, written

    def match_head(self) -> list[str]:
        """Make the working files main's commit's: a push into this store (it is someone's
        remote) moves main but not the files. Returns the logs whose files changed."""
        from service.adapters.store import gitcommit

        with self.locked():
            head = gitcommit.head(self.repo)
            return [] if head is None else self._materialize(head)

    @property
    def _checkout_mark(self) -> Path:
        return self.local_dir / "checkout"

    def _finish_checkout(self) -> None:
        from dulwich.objects import ObjectID

        from service.adapters.store import gitcommit

        with self.locked():
            try:
                target = ObjectID(self._checkout_mark.read_text("ascii").strip().encode("ascii"))
            except FileNotFoundError:
                return
            if gitcommit.head(self.repo) == target:
                self._materialize(target)
            self._checkout_mark.unlink(missing_ok=True)

    def _materialize(self, commit: ObjectID) -> list[str]:
        """Write the files of `commit`'s tree that differ on disk; remove segments it lacks."""
        from service.adapters.store import gitcommit

        wanted = gitcommit.tree_files(self.repo, commit)
        gone = [
            f"{layout.log_dir(log)}/{name}" for log in self.logs() for name in layout.segments(self.root, log)
        ]
        return self._write_files(wanted, [path for path in gone if path not in wanted])[0]

    def _write_files(
        self, wanted: dict[str, ObjectID], gone: list[str], *, fsync: bool = True, index: bool = True
    ) -> tuple[list[str], list[str]]:
        """Make the working files `wanted` (path → blob) and remove the segments `gone`:
        the logs whose files changed, and the files written."""
        from service.adapters.store import gitcommit

        on_disk = gitcommit.working_blob_ids(self.repo, [p for p in wanted if _safe_path(p)])
        written: list[str] = []
        changed: dict[str, bool] = {}  # log → only appended to
        for path, blob_id in sorted(wanted.items()):
            if not _safe_path(path) or on_disk.get(path) == blob_id:
                continue
            target = self.root / path
            try:
                old: bytes | None = target.read_bytes()
            except FileNotFoundError:
                old = None
            data = gitcommit.blob_data(self.repo, blob_id)
            layout.atomic_write(target, data, durable=fsync)
            written.append(path)
            log = layout.log_of_path(path)
            if log is not None:
                appended = old is None or data.startswith(old)
                changed[log] = changed.get(log, True) and appended
        removed: list[str] = []
        for path in gone:
            log = layout.log_of_path(path)
            if log is not None and _safe_path(path):
                (self.root / path).unlink(missing_ok=True)
                removed.append(path)
                changed[log] = False
        if index or removed:
            gitcommit.update_index(self.repo, written if index else [], removed)
        for log, appended in changed.items():
            if not appended:
                cache.drop(self.root, log)
        return sorted(changed), written

    def synced(self) -> None:
        """The logs on disk are what a remote holds (a sync just ended): the fold cache keeps
        what it needs to fold only the events after them when a later sync inserts some."""
        with self.locked():
            for log in self.logs():
                cache.published(self.root, log)

    @property
    def clock_file(self) -> Path:
        """The high-water mark of every id issued or seen (`.local/clock`)."""
        return self.local_dir / "clock"


class Transaction:
    """One locked unit of work on one log. Get it from `Store.transaction`."""

    def __init__(self, store: Store, log: str) -> None:
        self.store = store
        self.log = log
        self.commits: list[str] = []
        self.closed = False
        self._state: State | None = None
        self._quarantined: list[Quarantine] = []
        self._config: WorkspaceConfig | None = None

    @property
    def state(self) -> State:
        """The log's state, read under the lock; appends of this transaction are folded in."""
        if self._state is None:
            self._state, self._quarantined = self.store.state(self.log)
        return self._state

    def view(self, names: Sequence[str] | None) -> State:
        """What a command naming the records `names` reads (`requests.named`), read under the
        lock: the log's hot slice with those records brought in from the cold table, so a
        write costs what it reads, not the whole state; the whole state when `names` is None
        or a name starts too many ids. Appends of this transaction are folded in."""
        if self._state is None and names is not None:
            from service.adapters.store import hot

            found = hot.view(self.store.root, self.log, names)
            if found is not None:
                self._state, self._quarantined = found
        return self.state

    @property
    def quarantined(self) -> list[Quarantine]:
        _ = self.state
        return self._quarantined

    @property
    def config(self) -> WorkspaceConfig:
        if self._config is None:
            self._config = self.store.config()
        return self._config

    def next_ids(self, n: int) -> list[str]:
        """`n` new ids, greater than any this store issued or saw and than the log's last."""
        self._check_open()
        return clock.issue(self.store.clock_file, n, self.state.last_id)

    def new_id(self) -> str:
        return self.next_ids(1)[0]

    def now(self) -> str:
        """The wall clock as ISO-8601 UTC with milliseconds: 2026-11-30T09:57:45.069Z."""
        return clock.now()

    def append(self, events: list[Event]) -> None:
        """Append through the gate as one commit; nothing is written if any event is refused."""
        self._check_open()
        if not events:
            return
        from service.adapters.store import append as gate

        current = self.state
        store = self.store
        commit = gate.append(store.root, store.repo, self.log, events, current.last_id, store.local_facts())
        if commit is not None:
            self.commits.append(commit)
        cache.advance(current, events)
        clock.observe(self.store.clock_file, (e.id for e in events))

    def _check_open(self) -> None:
        if self.closed:
            raise StoreError("this transaction has ended (its lock is released); start a new one")


def _safe_path(path: str) -> bool:
    """Only the store's layout is written from a commit (a remote's tree passed the intake
    gate before; this keeps `.git/`, `.local/` and anything else out even if one did not)."""
    return path == layout.CONFIG_FILE or layout.log_of_path(path) is not None


def _encode_config(config: WorkspaceConfig) -> bytes:
    return msgspec.json.format(msgspec.json.encode(config, order="sorted"), indent=2) + b"\n"


def _make_folder(root: Path) -> None:
    """`root` and its parents as folders, or NotAFolder naming the file in the way."""
    for path in (root, *root.parents):
        if path.exists() and not path.is_dir():
            raise NotAFolder(f"{path} is a file, not a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotAFolder(f"cannot create {root}: {exc.strerror or exc}") from None
