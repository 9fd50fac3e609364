"""The gate for a tree that comes from outside: a fetched or cloned main, later a pushed pack.

Nothing of a remote's commit reaches the working files, and no ref moves to it, before
`check` has passed its tree (DESIGN.md, "Trust boundaries"):

- every name is UTF-8 and none is empty, `.`, `..` or a `.git` look-alike (any case, with
  trailing dots or spaces, NTFS's `git~1`, HFS+'s ignorable characters);
- every path is one of the store's layout — `workspace.json`, `workspace/log/NNNNNN.jsonl`,
  `projects/<slug>/log/NNNNNN.jsonl` — and every entry a regular file or a tree (no symbolic
  link, no gitlink, nothing else);
- every blob and tree is under its cap, read from the object's pack header before its
  content where the object store allows: a segment holds at most 1,000 events of at most
  MAX_EVENT_BYTES;
- workspace.json decodes as workspace settings;
- every line of a segment this replica does not hold yet is, unless it is a conflict marker
  (the sync repairs those), within the event cap, UTF-8, and passes the sanitize gate
  (`sanitize.check_event` on an object, `sanitize.check` on anything else); a line that is
  an event is in canonical bytes, has a valid id and belongs to its log. A line that is no
  event is carried as it is, as before (the reader quarantines it);
- on a sync, every commit the fetch brought beyond the local head passes the same checks
  (but for workspace.json, which only the head's must be): a later sync with another
  remote would pass them on. A clone checks the head (a history check there would cost
  O(history)).

An offending remote is refused as a whole, with a message naming the remote, the path (and
the event id and key path, never the value) and what to do: nothing is folded, written or
republished, so the published history stays append-only (no quarantine that a later sync
would have to rewrite).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import msgspec
from dulwich.errors import ObjectFormatException
from dulwich.objects import Blob, Commit, ObjectID, Tree
from dulwich.repo import Repo

from service.adapters.store import gitcommit, layout
from service.adapters.sync import graph, logs
from service.adapters.sync.entries import REGULAR, bad_mode, bad_name, object_size, printable
from service.adapters.sync.errors import NotSelfhub, SyncError
from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid
from service.core.events import ids
from service.core.events.events import MAX_EVENT_BYTES, canonical, decode_line
from service.core.gates import sanitize, segment_gate

MAX_SEGMENT_BYTES = MAX_EVENT_BYTES * layout.SEGMENT_EVENTS
MAX_CONFIG_BYTES = 64 * 1024
MAX_TREE_BYTES = 4 * 1024 * 1024  # some 100,000 entries: projects, or segments of one log
LAYOUT = "workspace.json, workspace/log/NNNNNN.jsonl and projects/<slug>/log/NNNNNN.jsonl"
_DONE = "nothing was written and main did not move"
_FIX_HEAD = (
    "remove it from the remote's main (a commit without it, pushed with git), or sync with another remote"
)
_FIX_HISTORY = (
    "a sync would pass that commit on to other remotes, so the remote's owner must take it out "
    "of main's history (reset main to before it and push); or sync with another remote"
)
_json = msgspec.json.Decoder()
_settings = msgspec.json.Decoder(WorkspaceConfig)


class RemoteRefused(SyncError):
    """A remote's tree or events fail the intake gate; nothing of it was taken."""

    code = "remote-refused"

    def __init__(self, where: str, path: str, what: str, commit: str | None = None) -> None:
        self.where, self.path, self.what = where, path, what
        # `what` may quote a decoder's message, which names keys the remote chose: escaped too
        shown = f"{printable(path) if path else 'its root tree'} {printable(what, 600)}"
        if commit is None:
            super().__init__(f"refused {where}: {shown}; {_DONE}; {_FIX_HEAD}")
        else:
            super().__init__(
                f"refused {where}: commit {commit} under its main: {shown}; {_DONE}; {_FIX_HISTORY}"
            )


class UnsafeEntry(RemoteRefused):
    """A name, a mode or a path outside the store's layout."""


class Oversize(RemoteRefused):
    """A blob or a line over its cap."""


class BadSettings(RemoteRefused):
    """workspace.json that is not workspace settings."""


class BadEvent(RemoteRefused):
    """A line that fails the event checks or the sanitize gate."""


def check(
    repo: Repo,
    commit_id: ObjectID,
    where: str,
    *,
    known: Collection[ObjectID] = (),
    local: Sequence[str] = (),
    since: Collection[ObjectID] | None = None,
    brought: Collection[ObjectID] | None = None,
    base: ObjectID | None = None,
    modes: frozenset[int] = REGULAR,
) -> dict[str, ObjectID]:
    """The files of `commit_id`'s tree (path → blob id) once every entry passed the gate.

    `where` names the source in messages (the remote as shown); blobs in `known` (those of
    the local head) are this replica's already and are not read again; `local` are the
    machine-local strings no event may hold (`Store.local_facts`). With `since` (the heads
    this replica holds), every commit `commit_id` brings beyond them is checked too, except
    that only the head's workspace.json must be valid settings: a sync passes on the whole
    history it took when it pushes to another remote. A tree, blob or line seen once is not
    checked again, so the commits of an append-only history cost little more than its head.
    `brought`: those commits, known already (a push's), instead of walked to from `since`.
    `base`: a commit that passed this gate (the hosted store's head, for a push): a tree or
    blob at the same path as in its tree is passed unread (the files under such a tree are
    left out of those returned), so a push costs what it changed. `modes`: the file modes
    taken (a push into a hosted store takes 100644 only).
    """
    history = since is not None or brought is not None
    passed = _Passed(repo, base) if base is not None else None
    intake = _Intake(repo, where, frozenset(known), tuple(local), history=history, passed=passed, modes=modes)
    files = intake.commit(commit_id, head=True)
    if brought is None and since is not None:
        brought = graph.only_in(repo, [commit_id], list(since))
    for other in sorted(set(brought or ()) - {commit_id}):
        intake.commit(other, head=False)
    return files


class _Passed:
    """The objects of a tree that passed the gate, by path; read only as far as asked."""

    def __init__(self, repo: Repo, commit_id: ObjectID) -> None:
        self.repo = repo
        commit = repo[commit_id]
        self.ids: dict[str, ObjectID | None] = {"": commit.tree if isinstance(commit, Commit) else None}
        self.entries: dict[ObjectID, dict[str, ObjectID]] = {}

    def holds(self, path: str, sha: ObjectID) -> bool:
        return self._at(path) == sha

    def _at(self, path: str) -> ObjectID | None:
        if path not in self.ids:
            parent, _, name = path.rpartition("/")
            above = self._at(parent)
            self.ids[path] = None if above is None else self._entries(above).get(name)
        return self.ids[path]

    def _entries(self, tree_id: ObjectID) -> dict[str, ObjectID]:
        if tree_id not in self.entries:
            tree = self.repo[tree_id]
            self.entries[tree_id] = (
                {e.path.decode("utf-8", "surrogateescape"): e.sha for e in tree.iteritems()}
                if isinstance(tree, Tree)
                else {}
            )
        return self.entries[tree_id]


class _Intake:
    def __init__(
        self,
        repo: Repo,
        where: str,
        known: frozenset[ObjectID],
        local: tuple[str, ...],
        *,
        history: bool,
        passed: _Passed | None = None,
        modes: frozenset[int] = REGULAR,
    ) -> None:
        self.repo, self.where, self.known, self.local, self.history = repo, where, known, local, history
        self.passed = passed
        self.modes = modes
        self.files: dict[str, ObjectID] = {}
        self.head = True
        self.done: set[tuple[str, ObjectID]] = set()  # (path, tree or blob) checked
        self.lines: set[tuple[str, bytes]] = set()  # (log, line) checked, kept for a history

    def commit(self, commit_id: ObjectID, *, head: bool) -> dict[str, ObjectID]:
        self.files, self.head = {}, head
        short = commit_id.decode("ascii", "replace")[:12]
        try:
            commit = self.repo[commit_id]
        except (KeyError, ObjectFormatException, ValueError):
            raise UnsafeEntry(self.where, "", f"is missing or malformed (commit {short})") from None
        tree_id = getattr(commit, "tree", None)
        if tree_id is None:
            raise UnsafeEntry(self.where, "", f"is missing: {short} is not a commit")
        if self._first("", tree_id):
            try:
                self.root(tree_id)
            except RemoteRefused as exc:
                if head:
                    raise
                raise type(exc)(self.where, exc.path, exc.what, short) from None
        return self.files

    def _first(self, path: str, sha: ObjectID) -> bool:
        """True the first time this intake meets `sha` at `path` (it is checked then), unless
        the tree that passed already holds it there."""
        key = (path, sha)
        if key in self.done:
            return False
        self.done.add(key)
        return self.passed is None or not self.passed.holds(path, sha)

    # --- the tree --------------------------------------------------------------------------

    def root(self, tree_id: ObjectID) -> None:
        entries = self._entries(tree_id, "")
        if self.head and not any(name == layout.CONFIG_FILE for name, _, _ in entries):
            raise NotSelfhub(
                f"{self.where} is not a selfhub workspace (its main has no {layout.CONFIG_FILE}); "
                "nothing was changed. Use an empty repository or one a selfhub store pushed to"
            )
        for name, mode, sha in entries:
            if name == layout.CONFIG_FILE and mode in REGULAR:
                self._settings(name, sha)
            elif name == "workspace" and mode == gitcommit.DIR_MODE:
                if self._first(name, sha):
                    self._log_folder(sha, "workspace", layout.WORKSPACE_LOG)
            elif name == "projects" and mode == gitcommit.DIR_MODE:
                if self._first(name, sha):
                    self._projects(sha)
            else:
                self._outside(name, mode)

    def _projects(self, tree_id: ObjectID) -> None:
        for name, mode, sha in self._entries(tree_id, "projects/"):
            path = f"projects/{name}"
            if mode == gitcommit.DIR_MODE and layout.LOG_KEY.match(name) and ".." not in name:
                if self._first(path, sha):
                    self._log_folder(sha, path, name)
            else:
                self._outside(path, mode)

    def _log_folder(self, tree_id: ObjectID, folder: str, log: str) -> None:
        for name, mode, sha in self._entries(tree_id, folder + "/"):
            path = f"{folder}/{name}"
            if name == "log" and mode == gitcommit.DIR_MODE:
                if self._first(path, sha):
                    self._segments(sha, path, log)
            else:
                self._outside(path, mode)

    def _segments(self, tree_id: ObjectID, folder: str, log: str) -> None:
        for name, mode, sha in self._entries(tree_id, folder + "/"):
            path = f"{folder}/{name}"
            if mode in REGULAR and layout.SEGMENT_NAME.match(name):
                self._segment(path, log, sha)
            else:
                self._outside(path, mode)

    def _entries(self, tree_id: ObjectID, prefix: str) -> list[tuple[str, int, ObjectID]]:
        """A tree's entries with their names checked; a name or a mode no store may hold
        is refused before the entry is looked at further."""
        shown = prefix.rstrip("/")
        size = object_size(self.repo, tree_id)
        if size is not None and size > MAX_TREE_BYTES:
            raise Oversize(
                self.where, shown, f"is a tree of {size:,} bytes, over the cap of {MAX_TREE_BYTES:,}"
            )
        try:
            tree = self.repo[tree_id]
            if not isinstance(tree, Tree):
                raise ValueError("not a tree")
            entries = list(tree.iteritems())
        except (KeyError, ObjectFormatException, ValueError):
            raise UnsafeEntry(self.where, shown, "is a tree that is missing or malformed") from None
        out = []
        for entry in entries:
            try:
                name = entry.path.decode("utf-8")
            except UnicodeDecodeError:
                shown = prefix + entry.path.decode("utf-8", "backslashreplace")
                raise UnsafeEntry(self.where, shown, "has a name that is not UTF-8") from None
            path = prefix + name
            problem = bad_name(name) or bad_mode(entry.mode, self.modes)
            if problem is not None:
                raise UnsafeEntry(self.where, path, problem)
            out.append((name, entry.mode, entry.sha))
        return out

    def _outside(self, path: str, mode: int) -> None:
        kind = "a folder" if mode == gitcommit.DIR_MODE else "a file"
        raise UnsafeEntry(self.where, path, f"is {kind} outside the store's layout ({LAYOUT})")

    # --- the blobs ---------------------------------------------------------------------------

    def _blob(self, path: str, sha: ObjectID, cap: int) -> bytes:
        size = object_size(self.repo, sha)
        if size is not None and size > cap:
            raise Oversize(self.where, path, f"is {size:,} bytes, over the cap of {cap:,}")
        try:
            blob = self.repo[sha]
        except (KeyError, ObjectFormatException, ValueError):
            raise UnsafeEntry(self.where, path, "is a file that is missing or malformed") from None
        if not isinstance(blob, Blob):
            raise UnsafeEntry(self.where, path, "is marked a file but is not one")
        data = blob.as_raw_string()
        if len(data) > cap:
            raise Oversize(self.where, path, f"is {len(data):,} bytes, over the cap of {cap:,}")
        return data

    def _settings(self, path: str, sha: ObjectID) -> None:
        self.files[path] = sha
        if sha in self.known or not self.head or (self.passed is not None and self.passed.holds(path, sha)):
            return
        problem = settings_problem(self._blob(path, sha, MAX_CONFIG_BYTES))
        if problem is not None:
            raise BadSettings(self.where, path, problem)

    def _segment(self, path: str, log: str, sha: ObjectID) -> None:
        self.files[path] = sha
        if sha in self.known or not self._first(path, sha):
            return
        lines = logs.lines_of(self._blob(path, sha, MAX_SEGMENT_BYTES))
        todo = segment_gate.unchecked(lines, log, self.local)  # None: every line
        for number, line in enumerate(lines, 1):
            if (log, line) not in self.lines:
                if todo is None or number - 1 in todo:
                    self._line(path, log, number, line)
                if self.history:
                    self.lines.add((log, line))

    def _line(self, path: str, log: str, number: int, line: bytes) -> None:
        where = f"line {number}"
        if logs.is_marker(line):
            return  # a plain-git merge's leftover: the sync removes it
        if len(line) > MAX_EVENT_BYTES:
            size = f"{len(line):,} bytes, over the cap of {MAX_EVENT_BYTES:,}"
            raise Oversize(self.where, path, f"has a {where} of {size}")
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError:
            raise BadEvent(self.where, path, f"has a {where} that is not UTF-8") from None
        try:
            value = _json.decode(line)
        except msgspec.DecodeError:
            self._sanitized(path, where, text, None)  # not JSON: carried as it is, if clean
            return
        claimed = value.get("id") if isinstance(value, dict) else None
        named = f"event {claimed}" if isinstance(claimed, str) and ids.is_id(claimed) else where
        self._sanitized(path, named, value, value if isinstance(value, dict) else None)
        if isinstance(value, dict) and {"id", "ts", "type", "origin", "project", "payload"} <= value.keys():
            self._event(path, log, named, line)

    def _sanitized(self, path: str, named: str, value: object, event: dict[str, object] | None) -> None:
        try:
            if event is not None:
                sanitize.check_event(event, local=self.local)
            else:
                sanitize.check(value, "", local=self.local)
        except sanitize.Unsanitary as exc:
            found = "; ".join(f"{key} {kind}" for key, kind in exc.findings)
            raise BadEvent(
                self.where, path, f"has {named} that holds machine-local or secret facts ({found})"
            ) from None
        except Invalid as exc:
            raise BadEvent(self.where, path, f"has {named} that is not event data ({exc})") from None

    def _event(self, path: str, log: str, named: str, line: bytes) -> None:
        try:
            event = decode_line(line.rstrip(b"\n"))
        except Invalid as exc:
            raise BadEvent(self.where, path, f"has {named} that does not decode ({exc})") from None
        if not ids.is_id(event.id):
            raise BadEvent(self.where, path, f"has {named} whose id is not a valid id")
        if event.project != log:
            raise BadEvent(self.where, path, f"has {named} of another log ({layout.display(event.project)})")
        if canonical(event) != line:
            raise BadEvent(self.where, path, f"has {named} that is not in canonical bytes")


def blob_ids(repo: Repo, commit_id: ObjectID | None) -> set[ObjectID]:
    """Every blob id of a commit's tree, names unread (a local head a sync made before this
    gate existed may hold a name that is not UTF-8): what `check` takes as `known`."""
    if commit_id is None:
        return set()
    commit = repo[commit_id]
    found: set[ObjectID] = set()
    stack = [commit.tree] if isinstance(commit, Commit) else []
    while stack:
        tree = repo[stack.pop()]
        if not isinstance(tree, Tree):
            continue
        for entry in tree.iteritems():
            if entry.mode == gitcommit.DIR_MODE:
                stack.append(entry.sha)
            elif entry.mode in REGULAR:
                found.add(entry.sha)
    return found


def settings_problem(data: bytes) -> str | None:
    """Why `data` cannot be a workspace.json that travels, or None."""
    if len(data) > MAX_CONFIG_BYTES:
        return f"is {len(data):,} bytes, over the cap of {MAX_CONFIG_BYTES:,}"
    try:
        settings = _settings.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"is not valid workspace settings ({exc})"
    return layout.format_problem(settings.format)
