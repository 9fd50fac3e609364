"""The gate for a push into a store this service hosts (its git endpoint).

A pushed commit moves main only once it passed every check a fetch applies (`intake.check`
on it and on every commit it brings: paths, entry kinds, sizes, settings, sanitize,
canonical events, ids no further ahead than the clock horizon) and, beyond those, the rule
of a published history, appends only:

- main moves forward: the pushed commit descends from main (no rewrite, no other branch's
  history in its place); deleting main is refused by the endpoint before this gate;
- every log main holds is still there, each of its segments but the last the same blob,
  the last one a byte prefix of the new one: no event edited, removed or moved;
- what is appended is whole events only, none holding an id its log holds already, laid out
  as the store lays logs (every segment before the last holds 1,000 events);
- files are of mode 100644 only (no executable bit, symlink or submodule), named by path;
- every appended event passes the admission a posted event passes (`admit`, through
  `core/gates/admit.py: admit`, in log order on the state before the push): it folds as
  written, a done has its evidence (a report earlier in the same push counts), a new claim,
  decision or question passes the ledger's rules, and no import mark or voucher is taken
  (but from a workspace admin). One refused there is judged again on the log as its writer
  could have seen it (`_as_written`): history written offline is not refused forever.

A refusal names the path (and the event id, never its content) and what to do; nothing moved.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from dulwich.objects import Commit, ObjectID
from dulwich.repo import Repo

from service.adapters.store import Store, clock, gitcommit, layout, segments, treediff
from service.adapters.sync import intake, logs, prefix
from service.adapters.sync.entries import PLAIN
from service.adapters.sync.errors import SyncError
from service.core.commands.config import WorkspaceConfig
from service.core.errors import Invalid, ModelError
from service.core.events import ids, order
from service.core.events.events import Event, decode_line
from service.core.fold.fold import fold_all
from service.core.fold.state import State
from service.core.gates import admit as admission

_FIX = "fetch main (self sync or git pull), add your events after it, and push again"


class PushRefused(SyncError):
    """A pushed commit fails the push gate; main did not move."""

    code = "push-refused"


class Stale(PushRefused):
    code = "push-stale"

    def __init__(self, expected: str | None, found: str | None) -> None:
        self.expected, self.found = expected, found
        super().__init__(
            f"main is at {_short(found)}, not at {_short(expected)} as the push expected (someone "
            f"pushed first); {_FIX}"
        )


class NotForward(PushRefused):
    code = "push-not-forward"

    def __init__(self, head: str) -> None:
        super().__init__(
            f"the pushed commit does not build on main ({_short(head)}): a published history is "
            f"never rewritten; {_FIX}"
        )


class NotAppend(PushRefused):
    code = "push-not-append"

    def __init__(self, path: str, what: str) -> None:
        self.path = path
        super().__init__(f"{path}: {what}; events are only ever appended, so {_FIX}")


class AheadOfClock(PushRefused):
    code = "push-ahead-of-clock"

    def __init__(self, event_id: str, hours: float) -> None:
        super().__init__(
            f"event {event_id}'s id is dated {hours:,.1f} h ahead of the service's clock (at most "
            f"{ids.HORIZON_MS // 3_600_000} h is taken); fix the clock of the machine that wrote it, "
            "write the event again and push"
        )


class NotAdmitted(PushRefused):
    code = "push-not-admitted"

    def __init__(self, path: str, event: Event, problem: ModelError) -> None:
        self.path, self.event_id, self.problem = path, event.id, problem.code
        why = _FIELD.sub(lambda m: m[1], problem.detail())
        super().__init__(
            f"{path}: event {event.id} ({event.type}) is not taken ({problem.code}): {why}; a push is "
            "held to what a post is: write the event again so that it passes (or leave it out of the "
            "commits you push)"
        )


_FIELD = re.compile(r"\{(?:events\[\d+\]\.)?([a-z_.\[\]0-9]+)\}")  # a post's field, as a name


class Pushed:
    """What an accepted push brings: its commit and its new events, in log order per log."""

    def __init__(self, commit: ObjectID, events: dict[str, list[Event]]) -> None:
        self.commit, self.events = commit, events

    def all_events(self) -> list[Event]:
        return [e for log in sorted(self.events) for e in self.events[log]]


def check(
    repo: Repo,
    store: Store,
    head: ObjectID | None,
    new: ObjectID,
    where: str,
    pushed: Callable[[ObjectID], bool],
) -> Pushed:
    """`new`'s new events when main (at `head`) may move to it. `repo` reads the pushed
    objects (and the store's), `pushed(id)` tells the push's own objects from the store's;
    `store` is the hosted store, locked by the caller."""
    if head == new:
        return Pushed(new, {})
    brought = _brought(repo, head, new, pushed)
    intake.check(repo, new, where, local=store.local_facts(), brought=brought, base=head, modes=PLAIN)
    changed = treediff.changed_files(repo, head, new)
    events: dict[str, list[Event]] = {}
    for log in sorted(layout.by_log(changed)):
        before, after = treediff.log_files(repo, head, log), treediff.log_files(repo, new, log)
        if not after:
            raise NotAppend(layout.log_dir(log), "the log is gone")
        lines = _appended(repo, log, sorted(before), sorted(after), before, after)
        if lines:
            events[log] = _new_events(repo, store, log, lines, sorted(before), before)
    _check_horizon(max((e.id for batch in events.values() for e in batch), default=None))
    return Pushed(new, events)


def admit(
    pushed: Pushed,
    state_of: Callable[[str], State],
    config: WorkspaceConfig,
    root: Path,
    *,
    imports: bool = False,
) -> None:
    """Every event `pushed` appends through the one admission of events written from outside,
    log by log in log order, on each log's state before the push (`state_of(log)`); NotAdmitted
    names the first that fails and why. `root`: the store, read only for `_as_written`.
    `imports`: the pusher is the workspace's admin, who may bring an imported store's history."""
    for log in sorted(pushed.events):
        events = pushed.events[log]
        post = admission.Post(config, events)
        state = state_of(log)
        for n, event in enumerate(events):
            try:
                admission.admit(state, event, n, post, imports=imports)
            except ModelError as exc:
                if not _as_written(root, log, events, n, config, imports):
                    raise NotAdmitted(layout.log_dir(log), event, exc) from None


def _as_written(
    root: Path, log: str, events: list[Event], n: int, config: WorkspaceConfig, imports: bool
) -> bool:
    """Whether `events[n]`, refused on the state before the push, passes on the log as its
    writer could have seen it: every event with an earlier id, the push's own included. An
    event written offline meets what others wrote meanwhile (a unit retired, a tier filled) as
    a sync's merge meets it: taken, and the fold rules on the two (a health signal), rather than
    refused forever from a log that is only ever appended to. The log is read on a refusal only."""
    event, before = events[n], events[:n]
    held = segments.read_log(root, log).events
    earlier = [e for e in (*held, *before) if order.after(event.id, e.id)]
    if not before and len(earlier) == len(held):
        return False  # the state before the push is the one its writer saw: judged already
    try:
        admission.admit(fold_all(earlier), event, n, admission.Post(config, events), imports=imports)
    except ModelError:
        return False
    return True


def _brought(
    repo: Repo, head: ObjectID | None, new: ObjectID, pushed: Callable[[ObjectID], bool]
) -> set[ObjectID]:
    """The commits the push brings: from `new` back through the pushed commits (what the
    store holds is main's history). NotForward unless that walk reaches main's head: the
    cost is the push's, not the history's."""
    found: set[ObjectID] = set()
    reached = head is None
    stack = [new]
    while stack:
        commit = stack.pop()
        if commit == head:
            reached = True
        elif commit not in found and pushed(commit):
            found.add(commit)
            parsed = repo[commit]
            stack.extend(parsed.parents if isinstance(parsed, Commit) else [])
    if not reached:
        raise NotForward("nothing" if head is None else head.decode())
    return found


def _check_horizon(top: str | None) -> None:
    """Ids from elsewhere may be at most `ids.HORIZON_MS` ahead of this machine's clock."""
    now = clock.wall_ms()
    if top is not None and ids.beyond_horizon(top, now):
        hours = (ids.time_ms(top) - now) / 3_600_000
        raise AheadOfClock(top, hours)


def _appended(
    repo: Repo,
    log: str,
    old: list[str],
    new: list[str],
    before: dict[str, ObjectID],
    after: dict[str, ObjectID],
) -> list[bytes]:
    """The lines `new`'s segments add after `old`'s; NotAppend when they change any."""
    if new[: len(old)] != old:
        raise NotAppend(layout.log_dir(log), "a segment of the log is gone")
    for path in old[:-1]:
        if before[path] != after[path]:
            raise NotAppend(path, "an event already published was changed, removed or moved")
    added = b""
    if old and before[old[-1]] != after[old[-1]]:
        was, now = gitcommit.blob_data(repo, before[old[-1]]), gitcommit.blob_data(repo, after[old[-1]])
        if not now.startswith(was) or not (was == b"" or was.endswith(b"\n")):
            raise NotAppend(old[-1], "an event already published was changed, removed or moved")
        added = now[len(was) :]
    tail = [p for p in new if p not in set(old)]
    full = (old[-1:] if old else []) + tail
    for path in full[:-1]:
        if gitcommit.blob_data(repo, after[path]).count(b"\n") != layout.SEGMENT_EVENTS:
            raise NotAppend(path, f"a segment before the log's last must hold {layout.SEGMENT_EVENTS} events")
    lines = logs.lines_of(added)
    for path in tail:
        lines += logs.lines_of(gitcommit.blob_data(repo, after[path]))
    return lines


def _new_events(
    repo: Repo, store: Store, log: str, lines: list[bytes], old: list[str], before: dict[str, ObjectID]
) -> list[Event]:
    """The appended lines as events: each one an event whose id its log does not hold yet."""
    where = layout.log_dir(log)
    events: list[Event] = []
    for n, line in enumerate(lines, 1):
        try:
            events.append(decode_line(line.rstrip(b"\n")))
        except Invalid:
            raise NotAppend(where, f"appended line {n} is not an event (a merge leftover?)") from None
    seen: set[str] = set()
    for event in events:
        if event.id in seen:
            raise NotAppend(where, f"event {event.id} is appended twice")
        seen.add(event.id)
    held = _held_ids(repo, store, old, before, sorted(seen))
    if held:
        raise NotAppend(where, f"event {held[0]} is in the log already")
    return events


def _held_ids(
    repo: Repo, store: Store, old: list[str], before: dict[str, ObjectID], ordered: list[str]
) -> list[str]:
    """Which of the sorted ids `ordered` main's segments `old` hold: the last one is read,
    a full one only when its id span (`prefix.py`, learned once per blob) meets them."""
    memo = prefix.load(store.local_dir)
    learned: list[tuple[str, prefix.Span]] = []
    found: set[str] = set()
    for n, path in enumerate(old):
        key = before[path].decode("ascii")
        span = memo.get(key)
        data: bytes | None = None
        if span is None and n < len(old) - 1:
            data = gitcommit.blob_data(repo, before[path])
            span = prefix.span_of(data)
            if span is not None:
                learned.append((key, span))
        if span is not None and not span.meets(ordered):
            continue
        data = data if data is not None else gitcommit.blob_data(repo, before[path])
        found |= logs.id_set(logs.lines_of(data)) & set(ordered)
    if learned:
        prefix.remember(store.local_dir, learned)
    return sorted(found)


def _short(sha: str | None) -> str:
    return "nothing (no commit yet)" if sha is None else sha[:12]
