"""The hot-slice cache: what context renders, readable without loading the whole state.

`.local/cache/<log>.hot.msgpack` holds the slice (`service.core.fold.hotslice`) and the counts of
the live records outside it; `<log>.cold.sqlite` holds the records outside it, one row each,
keyed by id (so the ids next to a shown one, which decide its short id, are two lookups),
and every record's reports, one row a record. In a project's log the records that only fill
a section (`hotslice.fills`: most full and index rows of a long-lived log) sit in the table
too, marked with their section and indexed in render order (priority, unset last, then the
newest first), so context reads the first rows of each section it shows and status the
counts the snapshot keeps (`ColdCounts.full`, `index`, `units`); a command reads them all
(the caps weigh every full and index row). New events are folded into the slice after
fetching the cold records they name and the reports filed under them, and records that stop
being hot go back to the cold table. A meta row ties the table to the
snapshot's last id: if the two disagree (a crash between writes), the slice is rebuilt
from the whole state. A table file that is not a whole SQLite file (cut short, overwritten)
is made again when it is opened, and one spoilt inside by the read that finds it (`_mended`).

A store this process may read but not write (another account's files, a read-only mount) is
read with the table in memory, rebuilt from the whole state, and nothing is written.

A slice rebuilt from the whole state is folded as a refold folds it but not written as
`<log>.msgpack` (`cache.snapshot(keep=False)`: that encoding would be the largest thing in
memory; only whole-state reads load it, and they write it). A record a waiting proposal would
supersede stays in the slice until the proposal is confirmed or withdrawn (`State.awaiting`). A
write reads the slice too: `Transaction.view(requests.named(command))` brings in every cold
record an id, prefix or alias of the command may name (the table keeps each record's alias),
and those with the text an add says (the key of each record's text, for the duplicate rule); a
prefix starting more than 64 cold ids, and an import, read the whole state.

`tests/integration/test_hot_slice.py` and `test_write_view.py` hold context, status and
commands on the slice to the whole state for random histories appended in random batches, and
`tests/unit/test_ledger_properties.py` the ledger's facts. The service keeps the same slice in
memory beside each whole state (`hotslice.Kept`, held to the whole state by
`tests/unit/test_kept_slice.py`).
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import itertools
import os
import sqlite3
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import wraps
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import msgspec

from service.adapters.store import cache, layout
from service.adapters.store.segments import Mark, Quarantine
from service.core.commands.requests import SAID
from service.core.events import ids
from service.core.events.events import WORKSPACE_LOG, Event
from service.core.fold import hotslice
from service.core.fold.hotslice import ColdCounts, ColdRecord
from service.core.fold.state import Entity, Report, State
from service.core.projections.render import neighbours

HOT_FORMAT = 6
REWRITE_TAIL = 200  # tail events after which the slice is written back


class HotSnapshot(msgspec.Struct, gc=False):
    format: int
    model: str
    segments: list[Mark]
    digest: str
    last_id: str | None
    state: State
    cold: ColdCounts
    quarantined: list[Quarantine]


_P = ParamSpec("_P")
_R = TypeVar("_R")
# a page or a row not as it was written
_SPOILT = (sqlite3.DatabaseError, msgspec.DecodeError, msgspec.ValidationError)


def _mended(read: Callable[Concatenate[Hot, _P], _R]) -> Callable[Concatenate[Hot, _P], _R]:
    """`read` of the table, asked again once the table is made anew when it finds the file
    spoilt (a malformed page, a row that does not decode): a cache is never trusted past one."""

    @wraps(read)
    def mended(hot: Hot, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return read(hot, *args, **kwargs)
        except sqlite3.OperationalError:
            raise  # busy, locked, out of room: not a sign the file is spoilt
        except _SPOILT:
            hot.mend()
            return read(hot, *args, **kwargs)

    return mended


class Hot(msgspec.Struct, gc=False):
    """A log's slice as context reads it."""

    state: State
    cold: ColdCounts
    quarantined: list[Quarantine]
    table: Path | sqlite3.Connection  # the cold table's file, or the table itself when held in memory
    left: list[ColdRecord] = msgspec.field(default_factory=list)  # left the slice, not in the table
    filed: dict[str, list[Report]] = msgspec.field(default_factory=dict)  # reports not in the table
    fill: bool = False  # the records that only fill a section are kept out (a project's log)
    place: tuple[Path, str] | None = None  # the store and the log, to make a spoilt table anew

    def mend(self) -> None:
        """The table made anew from the log, in place, after a read found its file spoilt.
        The slice comes out as it was (a slice is a function of the log); `left` and `filed`
        are then in the table."""
        if self.place is None or not isinstance(self.table, Path):
            raise  # (called where a read failed) a table held in memory: nothing to mend
        root, log = self.place
        _discard(self.table)
        made = _read(root, log, _paths(root, log)[0], self.table)
        self.state, self.cold, self.left, self.filed = made.state, made.cold, made.left, made.filed

    @property
    def unsaved(self) -> list[str]:
        return [r.entity.id for r in self.left]

    @property
    def filler(self) -> Hot | None:
        """The records kept out of the slice that only fill a section, when there are any."""
        return self if self.fill else None

    def count(self, section: str) -> int:
        """How many records only fill `section` (full, progress or index)."""
        counts = self.cold
        return {"full": counts.full, "progress": counts.progress, "index": counts.index}[section]

    def rows(self, section: str) -> Iterator[Entity]:
        """The records that only fill `section`, in render order, each read when reached (and
        read on from where they were after the table is made anew, `mend`)."""
        given = 0
        try:
            for e in self._rows(section):
                given += 1
                yield e
        except sqlite3.OperationalError:
            raise
        except _SPOILT:
            self.mend()
            yield from itertools.islice(self._rows(section), given, None)

    def _rows(self, section: str) -> Iterator[Entity]:
        left = self._left_filling()
        extra = sorted(
            (r.entity for r in left if hotslice.section(r.entity) == section), key=hotslice.placing
        )
        skip = set(self.unsaved)
        stored = (e for e in self._stored(section) if e.id not in skip)
        inside = self.state.entities
        return heapq.merge((e for e in stored if e.id not in inside), extra, key=hotslice.placing)

    @_mended
    def filling(self) -> list[ColdRecord]:
        """Every record that only fills a section, each with its fact: read in one pass over
        the table (most of it) and decoded as one array."""
        with _opened(self.table) as table, cache.paused_gc():
            rows = table.execute("SELECT record FROM cold NOT INDEXED WHERE section IS NOT NULL").fetchall()
            head = b"\xdd" + len(rows).to_bytes(4, "big")  # a msgpack array of that many records
            records = _records_decoder.decode(b"".join([head, *(row[0] for row in rows)]))
        return self._outside(records) + self._left_filling()

    def _left_filling(self) -> list[ColdRecord]:
        if not self.fill:
            return []
        return [r for r in self.left if hotslice.fills(self.state, r.entity, r.fact)]

    def _stored(self, section: str) -> Iterator[Entity]:
        """The table's records of `section` in render order, read in growing batches, the
        file opened for each batch only: a reader that stops early (the budget is spent)
        leaves no connection open behind it, whenever it is collected."""
        offset, size = 0, _FIRST_BATCH
        while True:
            with _opened(self.table) as table:
                blobs = table.execute(_FILLING_BATCH, (section, size, offset)).fetchall()
            for (blob,) in blobs:
                yield _record_decoder.decode(blob).entity
            if len(blobs) < size:
                return
            offset, size = offset + size, min(size * 4, _LAST_BATCH)

    @_mended
    def near(self, ids: Collection[str]) -> list[str]:
        """The ids of records outside the slice that sort right before and after each of `ids`."""
        found = list(neighbours(sorted(self.unsaved))(ids)) if self.left else []
        wanted = list(ids)
        with _opened(self.table) as reader:
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                rows = ",".join(["(?)"] * len(batch))
                sql = f"WITH w(id) AS (VALUES {rows}) SELECT {_BEFORE}, {_AFTER} FROM w"
                for before, after in reader.execute(sql, batch):
                    found += [x for x in (before, after) if x is not None]
        return found

    @_mended
    def ids(self) -> list[str]:
        """Every entity id of the log, sorted: the slice's and the cold table's."""
        with _opened(self.table) as table:
            cold = {row[0] for row in table.execute("SELECT id FROM cold")}
        return sorted(cold | set(self.state.entities) | set(self.unsaved))

    @_mended
    def holds(self, prefix: str) -> bool:
        """Whether the log has a record whose id starts with `prefix` (any case) or whose
        imported alias is `prefix`."""
        start = prefix.lower()
        if any(k.startswith(start) for k in self.state.entities) or any(
            _aliased(e, prefix) for e in self.state.entities.values()
        ):
            return True
        if any(r.entity.id.startswith(start) or _aliased(r.entity, prefix) for r in self.left):
            return True
        with _opened(self.table) as table:
            sql = "SELECT 1 FROM cold WHERE (id >= ? AND id < ?) OR alias = ? LIMIT 1"
            return table.execute(sql, (start, start + _PAST, prefix)).fetchone() is not None

    def fetch(self, wanted: Collection[str]) -> list[Entity]:
        """The records of `wanted` outside the slice (those that exist), by id."""
        return [r.entity for r in self.cold_records(wanted)]

    @_mended
    def reports(self, keys: Collection[str]) -> dict[str, list[Report]]:
        """The reports filed under each of `keys` that has any."""
        wanted = set(keys)
        with _opened(self.table) as table:
            found = _reports(table, sorted(wanted))
        found.update((k, v) for k, v in self.filed.items() if k in wanted)
        return found

    @_mended
    def cold_records(self, wanted: Collection[str]) -> list[ColdRecord]:
        """The records of `wanted` outside the slice (those that exist), each with its fact."""
        found = [r for r in self.left if r.entity.id in wanted]
        with _opened(self.table) as table:
            found += self._outside(_fetch(table, sorted(wanted)))
        return found

    def _outside(self, rows: list[ColdRecord]) -> list[ColdRecord]:
        """`rows` read from the table but those of records in the slice or that left it again
        since (`left`): a record brought in keeps its row, as it was when it left, until it
        leaves again and the table is written."""
        unsaved = set(self.unsaved)
        return [r for r in rows if r.entity.id not in self.state.entities and r.entity.id not in unsaved]

    @_mended
    def records(self, prefixes: Iterable[str]) -> list[ColdRecord] | None:
        """The records outside the slice that each of `prefixes` may name: those whose id
        starts with it (as `ids.resolve` reads a prefix) and those whose alias it is; None
        when one prefix starts more than `MAX_NAMED` of their ids (a read of the whole
        state answers that one)."""
        found: dict[str, ColdRecord] = {}
        with _opened(self.table) as table:
            for prefix in prefixes:
                start = prefix.strip().lower()
                by_id: list[ColdRecord] = []
                if start and ids.PREFIX_PATTERN.match(start):
                    rows = table.execute(
                        "SELECT record FROM cold WHERE id >= ? AND id < ? LIMIT ?",
                        (start, start + _PAST, MAX_NAMED + 1),
                    ).fetchall()
                    if len(rows) + sum(r.entity.id.startswith(start) for r in self.left) > MAX_NAMED:
                        return None  # counted before the slice's own are left out: rows past the limit
                    by_id = self._outside([_record_decoder.decode(row[0]) for row in rows])
                    by_id += [r for r in self.left if r.entity.id.startswith(start)]
                if prefix.startswith(SAID):
                    saying = self._saying(table, prefix.removeprefix(SAID))
                    if saying is None:
                        return None
                    found.update((r.entity.id, r) for r in saying)
                    continue
                rows = table.execute("SELECT record FROM cold WHERE alias = ?", (prefix,)).fetchall()
                by_alias = self._outside([_record_decoder.decode(row[0]) for row in rows])
                by_alias += [r for r in self.left if _aliased(r.entity, prefix)]
                found.update((r.entity.id, r) for r in (*by_id, *by_alias))
        return [found[i] for i in sorted(found)]

    def _saying(self, table: sqlite3.Connection, text: str) -> list[ColdRecord] | None:
        """The records outside the slice whose text is `text` (by its key, `_said`); None past
        `MAX_NAMED` of them."""
        rows = table.execute(
            "SELECT record FROM cold WHERE said = ? LIMIT ?", (_said(text), MAX_NAMED + 1)
        ).fetchall()
        if len(rows) > MAX_NAMED:
            return None
        held = self._outside([_record_decoder.decode(row[0]) for row in rows])
        return [r for r in [*held, *self.left] if r.entity.text == text]


def _said(text: str) -> str:
    """The key of a record's text in the table (its column `said`, indexed)."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


_PAST = "\x7f"  # sorts after every character an id holds: [p, p + _PAST) is every id starting p
MAX_NAMED = 64  # cold records one prefix may name before a command reads the whole state


def _aliased(e: Entity, prefix: str) -> bool:
    return e.ledger is not None and e.ledger.alias == prefix


def _alias(r: ColdRecord) -> str | None:
    return r.entity.ledger.alias if r.entity.ledger is not None and r.entity.ledger.alias else None


_FILLING = "SELECT record FROM cold WHERE section = ? ORDER BY unset, priority, created DESC, id"  # `placing`
_FILLING_BATCH = f"{_FILLING} LIMIT ? OFFSET ?"
_FIRST_BATCH, _LAST_BATCH = 64, 4096  # rows of a section read at once: a budget reads tens
_BEFORE = "(SELECT max(id) FROM cold WHERE id < w.id)"
_AFTER = "(SELECT min(id) FROM cold WHERE id > w.id)"


_decoder = msgspec.msgpack.Decoder(HotSnapshot)
_record_decoder = msgspec.msgpack.Decoder(ColdRecord)
_records_decoder = msgspec.msgpack.Decoder(list[ColdRecord])
_reports_decoder = msgspec.msgpack.Decoder(list[Report])
_encoder = msgspec.msgpack.Encoder()


def hot(root: Path, log: str) -> Hot:
    """The slice of `log`, advanced by whatever was appended since it was written. A table
    file that is not a whole SQLite database (cut short, overwritten) is made anew."""
    snap_path, table_path = _paths(root, log)
    held = table_path if _writable(table_path) else _memory_table()
    if isinstance(held, Path) and not _sound(held):
        _discard(held)
    try:
        return _read(root, log, snap_path, held)
    except sqlite3.OperationalError:
        raise  # busy, locked, out of room: not a sign the file is spoilt
    except sqlite3.DatabaseError:  # not a database, or a malformed one
        if not isinstance(held, Path):
            raise
        _discard(held)
        return _read(root, log, snap_path, held)


def _read(root: Path, log: str, snap_path: Path, held: Path | sqlite3.Connection) -> Hot:
    names = layout.segments(root, log)
    snap = _load(snap_path)
    fill = log != WORKSPACE_LOG  # the workspace log's live records are all shared: none kept out
    with _opened(held) as table:
        if snap is None or _table_last_id(table) != snap.last_id:
            return _rebuild(root, log, (snap_path, held), table, fill)
        tail = cache.tail(root, log, names, snap)
        if tail is None or not cache.extends(snap, tail.events):
            return _rebuild(root, log, (snap_path, held), table, fill)
        left: list[ColdRecord] = []
        filed: dict[str, list[Report]] = {}
        if tail.events:
            advanced = _advance(snap, tail.events, table, fill)
            if advanced is None:
                return _rebuild(root, log, (snap_path, held), table, fill)
            leaving, reports = advanced
            snap.quarantined.extend(tail.quarantined)
            snap.segments = snap.segments[:-1] + tail.marks
            snap.digest = tail.digest
            snap.last_id = snap.state.last_id
            if len(tail.events) >= REWRITE_TAIL:
                snap.state.ledger = hotslice.kept_facts(snap.state.ledger, snap.state.entities)
                _save(snap_path, snap, table)
            else:  # a short tail is cheaper to fold again than the snapshot is to rewrite
                table.rollback()
                left, filed = leaving, reports
        quarantined = snap.quarantined + tail.fragment
        return Hot(snap.state, snap.cold, quarantined, held, left, filed, fill=fill, place=(root, log))


def view(root: Path, log: str, prefixes: Iterable[str]) -> tuple[State, list[Quarantine]] | None:
    """The slice of `log` with the cold records `prefixes` may name brought into it, with the
    facts their views read and the reports of every record they may name: what a command
    naming those records reads of the whole state (`requests.named`); None when a prefix
    names too many of them. The records that only fill a section are brought in too: the caps
    weigh every full and index row."""
    sliced = hot(root, log)
    records = sliced.records(prefixes)
    if records is None:
        return None
    state = hotslice.with_records(sliced.state, [*sliced.filling(), *records])
    hotslice.complete(state, [r.entity.id for r in records], sliced.cold_records)
    state.reports = sliced.reports(_named(state, list(prefixes)))
    return state, sliced.quarantined


def _named(state: State, prefixes: list[str]) -> list[str]:
    """The ids of `state`'s records each of `prefixes` may name: by id prefix or by alias."""
    starts = tuple(p.strip().lower() for p in prefixes if p.strip())
    aliases = set(prefixes)
    return [
        i
        for i, e in state.entities.items()
        if i.startswith(starts) or (e.ledger is not None and e.ledger.alias in aliases)
    ]


def _advance(
    snap: HotSnapshot, events: list[Event], table: sqlite3.Connection, fill: bool
) -> tuple[list[ColdRecord], dict[str, list[Report]]] | None:
    """Fold `events` into the slice, with the reports they read and write brought in and
    put back; the records that left it and the reports written, or None when one of the
    events needs the whole state."""
    touched = hotslice.touched(snap.state, events)
    if touched is None:
        return None
    missing = sorted(i for i in touched if i not in snap.state.entities)
    records, filling = _fetch_placed(table, missing)
    hotslice.bring_in(snap.state, snap.cold, records, filling)
    snap.state.reports = _reports(table, hotslice.filed(touched))
    cache.advance(snap.state, events)
    hotslice.complete(snap.state, touched, lambda wanted: _fetch(table, wanted))
    leaving = hotslice.push_out(snap.state, snap.cold, touched, fill)
    reports, snap.state.reports = snap.state.reports, {}
    _store(table, leaving, snap.state if fill else None)
    _store_reports(table, reports)
    return leaving, reports


def _rebuild(
    root: Path,
    log: str,
    paths: tuple[Path, Path | sqlite3.Connection],
    table: sqlite3.Connection,
    fill: bool,
) -> Hot:
    whole, fragment = cache.snapshot(root, log, keep=False)
    state = whole.state
    with cache.paused_gc():
        sliced, cold, counts = hotslice.split(state, fill)
    snapshot = HotSnapshot(
        HOT_FORMAT,
        _fingerprint(),
        whole.segments,
        whole.digest,
        state.last_id,
        sliced,
        counts,
        whole.quarantined,
    )
    table.execute("DELETE FROM cold")
    table.execute("DELETE FROM reports")
    _store(table, cold, state if fill else None)
    _store_reports(table, state.reports)
    _save(paths[0], snapshot, table)
    return Hot(sliced, counts, whole.quarantined + fragment, paths[1], fill=fill, place=(root, log))


# --- files ---------------------------------------------------------------------------------


def _paths(root: Path, log: str) -> tuple[Path, Path]:
    base = layout.cache_file(root, log)
    return base.with_suffix(".hot.msgpack"), base.with_suffix(".cold.sqlite")


def _fingerprint() -> str:
    return f"{cache.model_fingerprint()}-{HOT_FORMAT}"


def _load(path: Path) -> HotSnapshot | None:
    try:
        with cache.paused_gc():
            snap = _decoder.decode(path.read_bytes())
    except (OSError, msgspec.DecodeError, msgspec.ValidationError):
        return None
    if snap.format != HOT_FORMAT or snap.model != _fingerprint():
        return None
    return snap


def _save(path: Path, snap: HotSnapshot, table: sqlite3.Connection) -> None:
    """The table first (with the snapshot's last id), then the snapshot (not beside a table
    held in memory: that store cannot be written)."""
    table.execute("INSERT OR REPLACE INTO meta VALUES ('last_id', ?)", (snap.last_id or "",))
    table.commit()
    if _in_memory(table):
        return
    with contextlib.suppress(OSError):  # a cache that cannot be written is only slower
        layout.atomic_write(path, _encoder.encode(snap), durable=False)


def _sound(path: Path) -> bool:
    """Whether the table file at `path` is missing or holds every page its header counts:
    a SQLite file's header names its page size and (at a commit) its pages, and the file is
    at least that long (a write-ahead log may hold later pages). A cut file, or one of other
    bytes, is not."""
    try:
        with path.open("rb") as handle:
            header = handle.read(100)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not header:
        return True  # an empty file is an empty database
    if len(header) < 100 or not header.startswith(b"SQLite format 3\x00"):
        return False
    page = int.from_bytes(header[16:18], "big")
    page = 65536 if page == 1 else page
    pages = int.from_bytes(header[28:32], "big")
    return size >= page * pages


def _discard(path: Path) -> None:
    """The table file and its write-ahead log removed (the table is made again)."""
    for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):
        with contextlib.suppress(FileNotFoundError):
            (path.parent / name).unlink()


def _writable(path: Path) -> bool:
    """Whether this process may write the cold table at `path` (and the folder it lives in,
    where SQLite keeps its write-ahead log). A store on a read-only mount, or one whose files
    are another user's, is read with the table in memory: a read writes nothing it needs."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:  # made on the first write
        folder = folder.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    return not path.exists() or os.access(path, os.R_OK | os.W_OK)


def _memory_table() -> sqlite3.Connection:
    return _open_table(None)


def _in_memory(table: sqlite3.Connection) -> bool:
    return not table.execute("PRAGMA database_list").fetchone()[2]


@contextlib.contextmanager
def _opened(table: Path | sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """The cold table for the block: its file opened (and closed after), or the one in memory."""
    if isinstance(table, sqlite3.Connection):
        yield table
        return
    with contextlib.closing(_open_table(table)) as opened:
        yield opened


def _open_table(path: Path | None) -> sqlite3.Connection:
    """The cold table at `path`, made if missing; None: a new one in memory."""
    if path is None:
        table = sqlite3.connect(":memory:", check_same_thread=False)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        table = sqlite3.connect(path)
    table.execute("PRAGMA journal_mode=WAL")
    table.execute("PRAGMA synchronous=NORMAL")
    table.execute(f"CREATE TABLE IF NOT EXISTS cold ({_COLUMNS})")
    table.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    if {"section", "said"} - {row[1] for row in table.execute("PRAGMA table_info(cold)")}:
        # a table from before sections or texts were kept: made again (no last id: the slice is rebuilt)
        table.execute("DROP TABLE cold")
        table.execute(f"CREATE TABLE cold ({_COLUMNS})")
        table.execute("DELETE FROM meta")
        table.commit()
    table.execute("CREATE INDEX IF NOT EXISTS cold_alias ON cold (alias) WHERE alias IS NOT NULL")
    table.execute("CREATE INDEX IF NOT EXISTS cold_said ON cold (said)")
    table.execute(
        "CREATE INDEX IF NOT EXISTS cold_section ON cold (section, unset, priority, created DESC, id)"
        " WHERE section IS NOT NULL"
    )
    table.execute("CREATE TABLE IF NOT EXISTS reports (record TEXT PRIMARY KEY, reports BLOB NOT NULL)")
    return table


# a record outside the slice; `section` (full, progress, index) when it only fills that one, with
# what orders it there (`placing`); NULL for every other record; `said`, the key of its text
_COLUMNS = (
    "id TEXT PRIMARY KEY, record BLOB NOT NULL, alias TEXT,"
    " section TEXT, unset INTEGER, priority INTEGER, created TEXT, said TEXT"
)


def _table_last_id(table: sqlite3.Connection) -> str | None:
    row = table.execute("SELECT value FROM meta WHERE key = 'last_id'").fetchone()
    return None if row is None else (row[0] or None)


def _fetch(table: sqlite3.Connection, ids: list[str]) -> list[ColdRecord]:
    return [_record_decoder.decode(row[0]) for row in _keyed(table, "SELECT record FROM cold WHERE id", ids)]


def _fetch_placed(table: sqlite3.Connection, ids: list[str]) -> tuple[list[ColdRecord], set[str]]:
    """The records of `ids` in the table, and the ids of those that only fill a section."""
    records: list[ColdRecord] = []
    filling: set[str] = set()
    for blob, section in _keyed(table, "SELECT record, section FROM cold WHERE id", ids):
        records.append(_record_decoder.decode(blob))
        if section is not None:
            filling.add(records[-1].entity.id)
    return records, filling


def _keyed(table: sqlite3.Connection, select: str, keys: list[str]) -> Iterator[tuple[Any, ...]]:
    """The rows of `select … IN (keys)`, asked 500 keys at a time (SQLite before 3.32 binds
    at most 999 parameters a statement)."""
    for start in range(0, len(keys), 500):
        batch = keys[start : start + 500]
        yield from table.execute(f"{select} IN ({','.join('?' * len(batch))})", batch)


def _store(table: sqlite3.Connection, records: list[ColdRecord], state: State | None = None) -> None:
    """`records` written to the table; with `state` (a project's log), those that only fill a
    section in it marked with their section and place (`hotslice.fills`)."""
    table.executemany(
        "INSERT OR REPLACE INTO cold VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (_row(r, state) for r in records)
    )


def _row(r: ColdRecord, state: State | None) -> tuple[object, ...]:
    e = r.entity
    if state is None or not hotslice.fills(state, e, r.fact):
        return (e.id, _encoder.encode(r), _alias(r), None, None, None, None, _said(e.text))
    placed = (hotslice.section(e), e.priority is None, e.priority or 0, e.created)
    return (e.id, _encoder.encode(r), _alias(r), *placed, _said(e.text))


def _reports(table: sqlite3.Connection, keys: list[str]) -> dict[str, list[Report]]:
    rows = _keyed(table, "SELECT record, reports FROM reports WHERE record", keys)
    return {key: _reports_decoder.decode(blob) for key, blob in rows}


def _store_reports(table: sqlite3.Connection, reports: dict[str, list[Report]]) -> None:
    table.executemany(
        "INSERT OR REPLACE INTO reports VALUES (?, ?)", ((k, _encoder.encode(v)) for k, v in reports.items())
    )
