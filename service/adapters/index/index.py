"""`DATA/index.sqlite`: the live records of every log of every workspace, searchable.

Each workspace has a table of its own (`records_N`, N from `spaces`): one row per live record
of its logs, its haystack (`search.haystack`) in an FTS5 table with the trigram tokenizer
(`records_N_fts`, made and kept by sqlite-utils' `enable_fts` and its triggers), so a MATCH
finds exactly the records whose text holds a term as a substring (what `self search`
matches), and FTS5's statistics — how many records, their sizes, how many hold a term — are
those of the workspace, the corpus `self search` ranks over: its `bm25()` is the model's
ranking (`service/core/projections/search.py`). Per log, `logs` keeps the last event id and the
number of events indexed, and the placements waiting on a record (`State.pairs`) as they
were then; `heads`, per workspace, the commit its store's `main` named when a refresh began,
so a refresh of a store that has not moved (`moved_only`) reads nothing but that ref. `meta`
keeps the index format and the model's fingerprint: other code rebuilds.

`refresh` advances each log from the events after its last indexed id: the records those
events touch (`hotslice.touched`, the hot slice's rule) are written again from the folded state,
or deleted when no longer live. A log whose older part changed (a sync inserted events
before the last indexed id), one with a legacy event that reads the whole state, and a
missing index are indexed again from the folded state. The index is never the record: it
is rebuilt from the logs whenever in doubt.

A row's key (its rowid, `query.key`) is its log, then its exposure, then its place in the fold,
so a log indexed anew is written at its table's end, in key order (FTS5 writes its pending
lists out whenever a rowid goes down). Indexed anew, a log's rows are written first and then
put into FTS5 by one `INSERT … SELECT` over its key range, the table's insert trigger dropped
for that block inside the same transaction (`_untriggered`; five times faster than the
trigger's insert per row); the rows a refresh rewrites go through the triggers.
`tests/integration/test_search_index.py` grows random logs in steps and checks the index
against `fold_all` and its answers against `Workspace.search`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec
import sqlite_utils

from service.adapters.data.sqlite import connect, immediate, snapshot
from service.adapters.data.workspaces import Data
from service.adapters.index import query
from service.adapters.index.errors import SearchIndexError
from service.adapters.store import Store, segments
from service.adapters.store.cache import model_fingerprint
from service.core.events.events import Event
from service.core.fold import hotslice
from service.core.fold.fold import distinct
from service.core.fold.state import Entity, State
from service.core.projections import search
from service.core.projections.search import Pair

INDEX_FORMAT = 4  # 2: the heads table; 3: each record's `created`; 4: a table per workspace, bm25
TOKENIZER = "trigram case_sensitive 1"  # the haystack is lowercased by the model already
_encode = msgspec.msgpack.Encoder().encode
_decode_pairs = msgspec.msgpack.Decoder(dict[str, list[str]]).decode


class Refreshed(msgspec.Struct, frozen=True):
    """What one refresh did, per log (`workspace/log`; the workspace log is `workspace/`)."""

    advanced: list[str]
    rebuilt: list[str]
    dropped: list[str]


class _Log(msgspec.Struct):
    last_id: str | None
    events: int
    pairs: dict[str, list[str]]


class SearchIndex:
    """The search index of one data directory."""

    def __init__(self, data: Data, *, any_thread: bool = False) -> None:
        self.data = data
        self.db = connect(data.index_db, any_thread=any_thread)
        self._prepare()

    def close(self) -> None:
        self.db.conn.close()

    def __enter__(self) -> SearchIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- schema ---------------------------------------------------------------------------

    def _prepare(self) -> None:
        version = f"{INDEX_FORMAT}:{model_fingerprint()}"
        with immediate(self.db):
            meta = self.db.table("meta")
            held = meta.exists() and next(meta.rows_where("key = 'version'", select="value"), None)
            if held and held["value"] == version:
                return
            listed = "SELECT type, name FROM sqlite_master WHERE type IN ('trigger', 'view')"
            for kind, name in self.db.execute(listed).fetchall():
                self.db.execute(f"DROP {kind.upper()} IF EXISTS [{name}]")
            virtual = "type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%'"
            for (name,) in self.db.execute(f"SELECT name FROM sqlite_master WHERE {virtual}").fetchall():
                self.db.execute(f"DROP TABLE IF EXISTS [{name}]")  # its shadow tables with it
            for name in (n for n in self.db.table_names() if not n.startswith("sqlite_")):
                self.db.execute(f"DROP TABLE IF EXISTS [{name}]")
            meta.create({"key": str, "value": str}, pk="key")
            meta.insert({"key": "version", "value": version})
            self.db.table("logs").create(
                {"workspace": str, "log": str, "n": int, "last_id": str, "events": int, "pairs": bytes},
                pk=("workspace", "log"),
            )
            self.db.table("heads").create({"workspace": str, "head": str}, pk="workspace")
            self.db.table("spaces").create({"workspace": str, "n": int}, pk="workspace")

    def table(self, workspace: str) -> str | None:
        """The name of `workspace`'s records table (its FTS5 table is this + `_fts`), None
        before its first refresh."""
        row = self.db.execute("SELECT n FROM spaces WHERE workspace = ?", [workspace]).fetchone()
        return None if row is None else f"records_{row[0]}"

    def _made(self, workspace: str) -> str:
        """`workspace`'s records table, made on its first use (inside the caller's transaction)."""
        held = self.table(workspace)
        if held is not None:
            return held
        (n,) = self.db.execute("SELECT coalesce(max(n), 0) + 1 FROM spaces").fetchone()
        self.db.table("spaces").insert({"workspace": workspace, "n": n})
        name = f"records_{n}"
        records = self.db.table(name)
        records.create(
            {
                "key": int,  # the rowid: exposure, log and fold order (`query.key`)
                "log": str,
                "id": str,
                "seq": int,
                "exposure": str,
                "created": str,
                "hay": str,
                "entity": bytes,
            },
            pk="key",
        )
        records.create_index(["id", "log"], unique=True)  # also short ids: an id's neighbours
        records.create_index(["log", "seq"])
        records.enable_fts(["hay"], tokenize=TOKENIZER, create_triggers=True)
        return name

    # --- advancing ------------------------------------------------------------------------

    def refresh(self, workspaces: Iterable[str] | None = None, *, moved_only: bool = False) -> Refreshed:
        """Bring the index up to the logs of `workspaces` (default: every one in DATA); with
        `moved_only`, only of those whose store's head commit moved since their last refresh
        (a write that is not committed yet is then not seen until its commit)."""
        names = self.data.names()
        done = Refreshed([], [], [])
        chosen = names if workspaces is None else [w for w in workspaces if w in names]
        for name in chosen:
            with self.data.open(name) as store:
                head = store.head() or ""  # before reading the logs: a commit after it moves it
                if moved_only and head == self.head(name):
                    continue
                logs = store.logs()
                for log in logs:
                    self._refresh_log(name, store, log, done)
            self._drop(name, keep=logs, done=done)
            self.db.table("heads").upsert({"workspace": name, "head": head}, pk="workspace")
        if workspaces is None:
            for gone in self._indexed_workspaces() - set(names):
                self._drop(gone, keep=[], done=done)
        return done

    def _refresh_log(self, workspace: str, store: Store, log: str, done: Refreshed) -> None:
        with immediate(self.db):  # the fold too: another refresh may not write a newer one between
            state, _ = store.state(log)
            held = self._held(workspace, log)
            if held is not None and (held.last_id, held.events) == (state.last_id, state.events):
                return
            where = f"{workspace}/{log}"
            new = _after(store, log, held.last_id) if held is not None else None
            if held is None or new is None or held.events + len(new) != state.events:
                self._rebuild(workspace, log, state)
                done.rebuilt.append(where)
                return
            touched = hotslice.touched(State(pairs=held.pairs), new)
            if touched is None:
                self._rebuild(workspace, log, state)
                done.rebuilt.append(where)
                return
            if not self._rewrite(workspace, log, state, touched):
                self._rebuild(workspace, log, state)
                done.rebuilt.append(where)
                return
            done.advanced.append(where)

    def _held(self, workspace: str, log: str) -> _Log | None:
        row = self.db.execute(
            "SELECT last_id, events, pairs FROM logs WHERE workspace = ? AND log = ?", [workspace, log]
        ).fetchone()
        return None if row is None or row[2] is None else _Log(row[0], row[1], _decode_pairs(row[2]))

    def _rebuild(self, workspace: str, log: str, state: State) -> None:
        table = self._made(workspace)
        n = self._number(workspace, log)
        self.db.execute(f"DELETE FROM [{table}] WHERE log = ?", [log])
        rows = [_row(log, n, seq, e) for seq, e in enumerate(state.entities.values()) if e.live]
        rows.sort(key=_key)  # FTS5 writes its pending lists out whenever a rowid goes down
        with _untriggered(self.db, f"{table}_ai"):
            self.db.table(table).insert_all(rows, batch_size=500)
            low, high = query.span(n)
            self.db.execute(
                f"INSERT INTO [{table}_fts] (rowid, hay) "
                f"SELECT key, hay FROM [{table}] WHERE key BETWEEN ? AND ? ORDER BY key",
                [low, high],
            )
        self._mark(workspace, log, state)

    def _rewrite(self, workspace: str, log: str, state: State, ids: set[str]) -> bool:
        """Write the records `ids` names again; False (nothing kept of it) when a record's
        place in the fold moved, so its key would be another's: the log is rebuilt."""
        table = self._made(workspace)
        n = self._number(workspace, log)
        chosen = sorted(ids)
        for start in range(0, len(chosen), 500):
            part = chosen[start : start + 500]
            marks = ", ".join("?" * len(part))
            self.db.execute(f"DELETE FROM [{table}] WHERE log = ? AND id IN ({marks})", [log, *part])
        seq = {entity_id: i for i, entity_id in enumerate(state.entities)}
        live = [state.entities[i] for i in chosen if i in state.entities and state.entities[i].live]
        rows = sorted((_row(log, n, seq[e.id], e) for e in live), key=_key)
        keys = [row["key"] for row in rows]
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ", ".join("?" * len(part))
            if self.db.execute(f"SELECT 1 FROM [{table}] WHERE key IN ({marks}) LIMIT 1", part).fetchone():
                return False
        self.db.table(table).insert_all(rows)
        self._mark(workspace, log, state)
        return True

    def _number(self, workspace: str, log: str) -> int:
        """The number of `log` in `workspace`'s keys, given on its first indexing (inside the
        caller's transaction; `_mark` fills the rest of its row)."""
        row = self.db.execute(
            "SELECT n FROM logs WHERE workspace = ? AND log = ?", [workspace, log]
        ).fetchone()
        if row is not None:
            return int(row[0])
        (n,) = self.db.execute(
            "SELECT coalesce(max(n), -1) + 1 FROM logs WHERE workspace = ?", [workspace]
        ).fetchone()
        if n > query.MAX_LOG:
            raise SearchIndexError(f"workspace {workspace} has more than {query.MAX_LOG + 1} logs to index")
        self.db.execute(
            "INSERT INTO logs (workspace, log, n, events) VALUES (?, ?, ?, 0)", [workspace, log, n]
        )
        return int(n)

    def _mark(self, workspace: str, log: str, state: State) -> None:
        self.db.table("logs").upsert(
            {
                "workspace": workspace,
                "log": log,
                "last_id": state.last_id,
                "events": state.events,
                "pairs": _encode(state.pairs),
            },
            pk=("workspace", "log"),
        )

    def head(self, workspace: str) -> str | None:
        """The head commit of `workspace`'s store when its last refresh began ("" before its
        first commit), None when it was never refreshed."""
        row = self.db.execute("SELECT head FROM heads WHERE workspace = ?", [workspace]).fetchone()
        return None if row is None else str(row[0])

    def _drop(self, workspace: str, keep: list[str], done: Refreshed) -> None:
        marks = ", ".join("?" * len(keep))
        where = f"workspace = ? AND log NOT IN ({marks})" if keep else "workspace = ?"
        with immediate(self.db):
            gone = [r[0] for r in self.db.execute(f"SELECT log FROM logs WHERE {where}", [workspace, *keep])]
            table = self.table(workspace)
            if table is not None and keep:
                self.db.execute(f"DELETE FROM [{table}] WHERE log NOT IN ({marks})", keep)
            elif table is not None:
                self.db.execute(f"DROP TABLE [{table}_fts]")
                self.db.execute(f"DROP TABLE [{table}]")  # its triggers with it
                self.db.execute("DELETE FROM spaces WHERE workspace = ?", [workspace])
            self.db.execute(f"DELETE FROM logs WHERE {where}", [workspace, *keep])
            if not keep:
                self.db.execute("DELETE FROM heads WHERE workspace = ?", [workspace])
        done.dropped.extend(f"{workspace}/{log}" for log in gone)

    def _indexed_workspaces(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT DISTINCT workspace FROM logs")}

    # --- reading --------------------------------------------------------------------------

    def search(
        self,
        q: str,
        project: str | None = None,
        workspaces: Iterable[str] = (),
        limit: int = query.DEFAULT_LIMIT,
        exposure: str | None = None,
    ) -> list[query.Hit]:
        """The live records of `workspaces` matching `q`, ranked as `self search` ranks them
        (`project`'s records first); `exposure` keeps one exposure, None keeps every one."""
        with snapshot(self.db):
            return query.search(self.db, self._tables(workspaces), q, project, limit, exposure)

    def page(
        self,
        q: str,
        project: str | None,
        workspaces: Iterable[str],
        exposure: str | None,
        limit: int,
        hidden: bool = False,
    ) -> query.Page:
        """How many records match, the first `limit` in `search`'s order with their records,
        and their short ids among every match (`hidden`: and how many context shows)."""
        with snapshot(self.db):  # the count, the first and their short ids of one state
            return query.page(self.db, self._tables(workspaces), q, project, exposure, limit, hidden)

    def _tables(self, workspaces: Iterable[str]) -> dict[str, str]:
        """The records table of each of `workspaces` that has one, by name."""
        found = {name: self.table(name) for name in sorted(set(workspaces))}
        return {name: table for name, table in found.items() if table is not None}

    def entities(self, workspace: str, log: str) -> list[Pair]:
        """The records indexed for one log, in the fold's order (for checks and tests)."""
        table = self.table(workspace)
        if table is None:
            return []
        rows = self.db.execute(f"SELECT entity FROM [{table}] WHERE log = ? ORDER BY seq", [log])
        return [(query.decode_entity(row[0]), False) for row in rows]


def _after(store: Store, log: str, last_id: str | None) -> list[Event] | None:
    """The distinct events after `last_id`, in id order (`segments.read_after`: every
    segment holding a later id, wherever it sits); None when there is no mark. A log
    rewritten by hand is caught by the caller: the count of events no longer adds up, and
    the log is indexed again."""
    if last_id is None:
        return None
    return distinct(segments.read_after(store.root, log, last_id))[0]


@contextlib.contextmanager
def _untriggered(db: sqlite_utils.Database, trigger: str) -> Iterator[None]:
    """Without the trigger `trigger` until the block ends, inside the caller's transaction
    (a crash rolls the drop back with the rest). A log indexed anew goes into FTS5 in one
    INSERT … SELECT after its rows: five times faster than a trigger's insert per row."""
    listed = "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?"
    (sql,) = db.execute(listed, [trigger]).fetchone()
    db.execute(f"DROP TRIGGER [{trigger}]")
    yield
    db.execute(sql)


def _key(row: dict[str, Any]) -> int:
    return int(row["key"])


def _row(log: str, n: int, seq: int, entity: Entity) -> dict[str, Any]:
    return {
        "key": query.key(entity.exposure, n, seq),
        "log": log,
        "id": entity.id,
        "seq": seq,
        "exposure": entity.exposure,
        "created": entity.created,
        "hay": search.haystack(entity),
        "entity": _encode(entity),
    }
