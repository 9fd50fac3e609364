"""`self context`: a bounded projection of folded state for a fresh agent session.

Four steps: collect (workspace-scoped records + this project's), order (priority, then
recency), render (full → full row, index → one line, search → counted in a pointer), and
anchor the derived live state between the full block and the index lines: work in progress,
items waiting on a person, the count of other open work, deadlines, health. The agent
render keeps to a token budget by dropping whole rows from the bottom up, each dropped
group replaced by a pointer naming the command that shows it again.
"""

from __future__ import annotations

import itertools
import shlex
from collections.abc import Iterable, Iterator, Mapping
from functools import partial
from typing import Any, Protocol

import msgspec

from service.core.commands.config import CONTEXT_BUDGET, TOKENS_PER_CHAR, WorkspaceConfig
from service.core.errors import Invalid
from service.core.fold import lapse
from service.core.fold.hotslice import ColdCounts, is_hot
from service.core.fold.state import Entity, Pending, State
from service.core.ledger.derived import Views, owes, owing, plain, view_row
from service.core.ledger.ledger import moot
from service.core.projections import tokens
from service.core.projections.render import (
    LazyShorts,
    Near,
    full_row,
    index_row,
    label_of,
    one_line,
    plural,
    pointer,
)
from service.core.projections.status import Deadline, deadlines
from service.core.projections.views import awaits_decision, is_work, ledger_words, ordered, process_word

FULL, PROGRESS, WAITING, DEADLINES, HEALTH, INDEX = (
    "full",
    "progress",
    "waiting",
    "deadlines",
    "health",
    "index",
)
SECTION_ORDER = (FULL, PROGRESS, WAITING, DEADLINES, HEALTH, INDEX)
DROP_ORDER = (INDEX, HEALTH, DEADLINES, WAITING, PROGRESS, FULL)
TITLES = {
    PROGRESS: "Work in progress",
    WAITING: "Waiting on you",
    DEADLINES: "Deadlines",
    HEALTH: "Health",
    INDEX: "Index",
}
DROPPED = {
    FULL: ("full row", "full rows"),
    PROGRESS: ("work item in progress", "work items in progress"),
    WAITING: ("item waiting on you", "items waiting on you"),
    DEADLINES: ("deadline", "deadlines"),
    HEALTH: ("health line", "health lines"),
    INDEX: ("index row", "index rows"),
}


class Row(msgspec.Struct, frozen=True):
    """One rendered row and the record it is about (None for derived counts)."""

    text: str
    id: str | None = None
    short: str | None = None


class Section(msgspec.Struct):
    key: str
    title: str | None
    rows: list[Row] = msgspec.field(default_factory=list)
    pointers: list[str] = msgspec.field(default_factory=list)
    recover: str = ""


class ContextDoc(msgspec.Struct):
    project: str
    description: str | None
    today: str
    sections: list[Section]
    counts: dict[str, int]
    budget: int = CONTEXT_BUDGET
    tokens_per_char: float = TOKENS_PER_CHAR


class Commands(msgspec.Struct, frozen=True):
    """The recovery commands a project's pointers name."""

    state: str
    work: str
    search: str
    status: str

    @classmethod
    def of(cls, project: str) -> Commands:
        slug = shlex.quote(project)
        return cls(
            f"self state list --project {slug}",
            f"self work list --project {slug}",
            f"self search --project {slug}",
            f"self status --project {slug}",
        )


def confirm_command(e: Entity, short: str, project: str) -> str:
    """The exact command that confirms a waiting record or placement."""
    verb = "decide" if "decision" in e.labels else "state"
    elsewhere = f" --project {shlex.quote(e.project)}" if e.project and e.project != project else ""
    return f"self {verb} confirm {short}{elsewhere}"


def collect(state: State, shared: Iterable[Entity]) -> list[Entity]:
    """Workspace-scoped records and this project's live records, once each, in render order
    (a record whose scope names another project renders there, not here)."""
    return ordered(_chosen(state, shared))


def _chosen(state: State, shared: Iterable[Entity]) -> list[Entity]:
    """`collect`'s records in the order they were collected (render order sorts them stably)."""
    chosen = {e.id: e for e in shared if e.live}
    chosen.update((e.id, e) for e in state.live() if e.scope in ("project", "workspace"))
    return list(chosen.values())


def _shown(entities: list[Entity]) -> set[str]:
    """Ids that appear in rows or commands (search-exposure records are only counted)."""
    shown = {
        e.id
        for e in entities
        if e.exposure != "search" or e.status == "proposed" or e.execution or e.pending or e.target
    }
    shown.update(p.pair for e in entities for p in e.pending if p.pair)
    return shown


def pruned(e: Entity) -> bool:
    """A question no answer of which changes the action (value of information): context
    leaves out the row it would show, `self status` lists it. One at search exposure shows
    no row and stays counted with the others (so a hot slice counts it the same)."""
    return "question" in e.labels and e.ledger is not None and moot(e.ledger) and is_hot(e)


def _cited(entities: list[Entity], ledger: _LedgerRows) -> set[str]:
    """Ids a rendered ledger row's marks name (grounds owed a review, blockers, answers)."""
    cited: set[str] = set()
    citing = ledger.views.citing()  # no other view names a record
    for e in entities:
        extra = ledger.get(e.id) if e.id in citing else None
        if extra is not None:
            cited.update(item["ground"] for item in extra["review_owed"])
            cited.update(extra["blocked_by"] if extra["blocked"] else (), extra["resolved_by"])
    return cited


class _LedgerRows(Mapping[str, dict[str, Any]]):
    """The derived keys of each ledger record that has marks to show (`plain` ones have
    none), made when a row reads them."""

    def __init__(self, views: Views) -> None:
        self.views = views
        self._made: dict[str, dict[str, Any] | None] = {}

    def __getitem__(self, record_id: str) -> dict[str, Any]:
        if record_id not in self._made:
            view = self.views(record_id) if record_id in self.views.facts else None
            self._made[record_id] = None if view is None or plain(view) else view_row(view)
        made = self._made[record_id]
        if made is None:
            raise KeyError(record_id)
        return made

    def __iter__(self) -> Iterator[str]:
        return (i for i in self.views.facts if i in self)

    def __len__(self) -> int:
        return sum(1 for _ in self)


# --- build ----------------------------------------------------------------------------------


class Filler(Protocol):
    """The records a hot slice keeps out that only fill the full, progress or index section
    (`hotslice.fills`): how many, and each in render order when reached."""

    def count(self, section: str) -> int: ...
    def rows(self, section: str) -> Iterator[Entity]: ...


Item = tuple[Entity, str, Any]  # a record, the `_Builder` method making its row's text, a placement


def _order(e: Entity) -> tuple[bool, int]:
    """`views.ordered`'s first key: priority, unset last (recency orders within it)."""
    return (e.priority is None, e.priority or 0)


def _created(item: Item) -> str:
    return item[0].created


_FILLED = {FULL: "full_text", PROGRESS: "progress_text", INDEX: "index_text"}  # `_Builder` methods


def _before(e: Entity, other: Entity) -> bool:
    """Whether `e` renders strictly before `other` in a section (priority, then the newest)."""
    return _order(e) < _order(other) or (_order(e) == _order(other) and e.created > other.created)


class Rows:
    """A section's rows in render order, each made when it is first read: a document costs
    what it renders, not what it counts."""

    def __init__(self, count: int, made: Iterator[Row]) -> None:
        self.count = count
        self._made = made
        self._rows: list[Row] = []

    @classmethod
    def of(cls, rows: list[Row]) -> Rows:
        return cls(len(rows), iter(rows))

    @property
    def made(self) -> int:
        """How many of the rows were made so far."""
        return len(self._rows)

    def _reach(self, n: int) -> None:
        while len(self._rows) < n:
            self._rows.append(next(self._made))

    def upto(self, n: int) -> list[Row]:
        self._reach(n)
        return self._rows[:n]

    def __iter__(self) -> Iterator[Row]:
        for at in range(self.count):
            self._reach(at + 1)
            yield self._rows[at]

    def cut(self, room: int) -> Rows:
        """These rows, each cut to `room` characters when longer (`_cut`)."""
        return Rows(self.count, (_cut(row, room) for row in self))


class _Builder:
    """Sorts collected records into sections; one method per kind of row. A row's text is
    made only when the row is read (`Rows`), in render order: priority, then recency."""

    def __init__(
        self,
        project: str,
        shorts: Mapping[str, str],
        runs: dict[str, str],
        state: State,
        ledger: Mapping[str, dict[str, Any]] | None = None,
        now: str | None = None,
    ):
        self.now = now  # the instant proposals are judged at (`lapse`); None: none lapses
        self.lapsed = 0
        self.ledger = ledger if ledger is not None else {}
        self.project = project
        self.shorts = shorts
        self.runs = runs
        self.state = state
        self.cmd = Commands.of(project)
        self.sections = {key: Section(key, TITLES.get(key)) for key in SECTION_ORDER}
        self.items: dict[str, dict[tuple[bool, int], list[Item]]] = {key: {} for key in SECTION_ORDER}
        self.rows: dict[str, Rows] = {}
        self.counts = dict.fromkeys(("open_work", "search"), 0)
        self.filler: Filler | None = None

    def add(self, key: str, e: Entity, text: str, extra: Any = None) -> None:
        self.items[key].setdefault(_order(e), []).append((e, text, extra))

    def _made(self, buckets: dict[tuple[bool, int], list[Item]]) -> Iterator[Row]:
        """The rows of one section in render order."""
        for e, text, extra in self._ordered(buckets):
            yield Row(getattr(self, text)(e, extra), e.id, self.short(e))

    @staticmethod
    def _ordered(buckets: dict[tuple[bool, int], list[Item]]) -> Iterator[Item]:
        """A section's items in render order, sorting each priority only when reached (two
        stable sorts, as `views.ordered`: ties keep the order records were collected in)."""
        for order in sorted(buckets):
            yield from sorted(buckets[order], key=_created, reverse=True)

    def _filled(self, key: str, buckets: dict[tuple[bool, int], list[Item]]) -> Iterator[Row]:
        """The rows of the full, progress or index section: the slice's merged, in render
        order, with those of the records that only fill it (`filler`), each read when reached."""
        assert self.filler is not None
        text = _FILLED[key]
        items = self._ordered(buckets)
        filling = self.filler.rows(key)
        item, e = next(items, None), next(filling, None)
        while item is not None or e is not None:
            if e is None or (item is not None and not _before(e, item[0])):
                assert item is not None
                yield Row(getattr(self, item[1])(item[0], item[2]), item[0].id, self.short(item[0]))
                item = next(items, None)
            else:
                if isinstance(self.shorts, LazyShorts):
                    self.shorts.want(e.id)
                yield Row(getattr(self, text)(e, None), e.id, self.short(e))
                e = next(filling, None)

    def short(self, e: Entity) -> str:
        return self.shorts.get(e.id, e.id)

    def marks(self, e: Entity) -> str:
        """A ledger record's marks: its alias (an imported record's old id), recorded state,
        support, blocking, resolution."""
        words = [f"alias {e.ledger.alias}"] if e.ledger is not None and e.ledger.alias else []
        extra = self.ledger.get(e.id)
        if extra is not None:
            words += ledger_words(extra, lambda i: self.shorts.get(i, i))
        return f" ({'; '.join(words)})" if words else ""

    def place(self, e: Entity) -> None:
        if e.status == "proposed":
            self.proposal(e)
        elif e.execution == "in-progress":
            self.add(PROGRESS, e, "progress_text")
        elif e.exposure == "full":
            self.add(FULL, e, "full_text")
        elif e.exposure == "index":
            self.add(INDEX, e, "index_text")
        else:
            self.counts["open_work" if is_work(e) else "search"] += 1
        for pending in e.pending if e.status == "confirmed" else ():
            self.add(WAITING, e, "placement", pending)
        if awaits_decision(e):
            self.add(WAITING, e, "waits_text")

    def progress_text(self, e: Entity, _: None) -> str:
        return full_row(e) + self.marks(e) + self.process(e)

    def full_text(self, e: Entity, _: None) -> str:
        return full_row(e) + self.marks(e)

    def index_text(self, e: Entity, _: None) -> str:
        return index_row(e) + self.marks(e)

    def waits_text(self, e: Entity, _: None) -> str:
        why = f": {one_line(e.blocked_why, 80)}" if e.blocked_why else ""
        return f"- [{label_of(e)}] {one_line(e.text, 80)} waits on a decision{why}"

    def process(self, e: Entity) -> str:
        run = self.state.runs.get(e.id)
        local = self.runs.get(e.id)
        if run is None and local is None:
            return ""
        return f" — process {process_word(run, local)}"

    def proposal(self, e: Entity) -> None:
        if lapse.lapsed(e, self.now):  # past its expiry: no longer waits on a person
            self.lapsed += 1
            return
        self.add(WAITING, e, "proposal_text")

    def proposal_text(self, e: Entity, _: None) -> str:
        command = confirm_command(e, self.short(e), self.project)
        return f"- proposed {full_row(e)[2:]}{self.marks(e)} (confirm with `{command}`)"

    def placement(self, e: Entity, pending: Pending) -> str:
        moves = [m for m in (pending.exposure, pending.scope) if m]
        moves += [f"p{pending.priority}"] if pending.priority is not None else []
        why = f" ({one_line(pending.why, 80)})" if pending.why else ""
        owner = self.state.entities.get(pending.pair or "", e)
        command = confirm_command(owner, self.short(owner), self.project)
        head = f"- placement [{label_of(e)}] {one_line(e.text, 80)} → {' '.join(moves)}{why}"
        return f"{head} (confirm with `{command}`)"

    def deadline(self, d: Deadline, today: str) -> Row:
        mark = " (overdue)" if d.overdue else " (due today)" if d.target[:10] == today else ""
        return Row(f"- {d.target}{mark}: [{d.label}] {one_line(d.text)}", d.entity, self.shorts.get(d.entity))

    def finish(
        self, today: str, entities: list[Entity], health: int, owed: int = 0, moot: int = 0
    ) -> list[tuple[Section, Rows]]:
        if owed:
            what = f"{plural(owed, 'ledger record owes', 'ledger records owe')} a review"
            self.sections[WAITING].pointers.append(pointer(what, self.cmd.status))
        if self.lapsed:
            what = f"{plural(self.lapsed, 'proposal')} past expiry left out (still proposed)"
            self.sections[WAITING].pointers.append(pointer(what, self.cmd.state))
        if moot:
            what = f"{plural(moot, 'moot question')} left out (every answer leads to the same action)"
            self.sections[INDEX].pointers.append(pointer(what, self.cmd.status))
        for key, buckets in self.items.items():
            count = sum(map(len, buckets.values()))
            if self.filler is not None and key in _FILLED:
                self.rows[key] = Rows(count + self.filler.count(key), self._filled(key, buckets))
            else:
                self.rows[key] = Rows(count, self._made(buckets))
        due = deadlines(entities, today)
        self.rows[DEADLINES] = Rows(len(due), (self.deadline(d, today) for d in due))
        if health:
            self.rows[HEALTH] = Rows.of([Row(pointer(plural(health, "health signal"), self.cmd.status))])
        open_work = self.counts["open_work"]
        if open_work:
            what = f"{open_work} more open work {'item' if open_work == 1 else 'items'}"
            self.sections[PROGRESS].pointers.append(pointer(what, self.cmd.work))
        if self.counts["search"]:
            what = f"{plural(self.counts['search'], 'entity', 'entities')} at search exposure"
            self.sections[INDEX].pointers.append(pointer(what, self.cmd.search))
        recover = {PROGRESS: self.cmd.work, HEALTH: self.cmd.status}
        for section in self.sections.values():
            section.recover = recover.get(section.key, self.cmd.state)
        return [(s, self.rows[s.key]) for s in self.sections.values() if self.rows[s.key].count or s.pointers]


def build_context(
    project: str,
    state: State,
    shared: list[Entity],
    config: WorkspaceConfig,
    today: str,
    runs: dict[str, str],
    quarantined: int,
    description: str | None = None,
    shorts: dict[str, str] | None = None,
    cold: ColdCounts | None = None,
    near: Near | None = None,
    now: str | None = None,
    filler: Filler | None = None,
) -> ContextDoc:
    """The context document of `project` with every row made (`draft_context`'s, whole)."""
    return draft_context(
        project, state, shared, config, today, runs, quarantined,
        description=description, shorts=shorts, cold=cold, near=near, now=now, filler=filler,
    ).doc()  # fmt: skip


def draft_context(
    project: str,
    state: State,
    shared: list[Entity],
    config: WorkspaceConfig,
    today: str,
    runs: dict[str, str],
    quarantined: int,
    description: str | None = None,
    shorts: dict[str, str] | None = None,
    cold: ColdCounts | None = None,
    near: Near | None = None,
    now: str | None = None,
    filler: Filler | None = None,
) -> Draft:
    """The context document of `project`: sections of rendered rows, counts and pointers,
    each row made when it is read (the agent render reads those the budget keeps).

    `shared` holds workspace-scoped records (the workspace log's and other projects');
    `runs` maps work id → local liveness word; `cold` counts live records left out of a
    hot slice (`service.core.fold.hotslice`) and `near` finds the ids of those records that sort next
    to the ones shown (a short id is decided by its neighbours); `filler` gives the rows of the
    records it kept out that only fill the full, progress and index sections; `today`
    is the ISO date deadlines are judged against and `now` the instant proposals are (one
    past its expiry is left out, `lapse`); `quarantined` counts log lines the store
    could not read. The document carries `config`'s budget and tokens per character for `render_agent`.
    """
    collected = _chosen(state, shared)
    entities = [e for e in collected if not pruned(e)]
    views = Views(state)
    owed = owing(state, {i: views(i) for i in owes(state)})
    ledger = _LedgerRows(views)
    found = shorts if shorts is not None else _shorts(state, shared, entities, ledger, near)
    builder = _Builder(project, found, runs, state, ledger, now)
    builder.filler = filler
    if cold is not None:
        builder.counts["search"] += cold.search
        builder.counts["open_work"] += cold.open_work
    for e in entities:
        builder.place(e)
    moot = len(collected) - len(entities)
    sections = builder.finish(today, entities, len(state.signals) + quarantined, owed, moot)
    counts = dict.fromkeys(SECTION_ORDER, 0) | {s.key: rows.count for s, rows in sections}
    counts |= builder.counts | {"health": len(state.signals) + quarantined}
    known = state.projects.get(project)
    doc = ContextDoc(
        project=project,
        description=description or (known.description if known else None),
        today=today,
        sections=[s for s, _ in sections],
        counts=counts,
        budget=config.context_budget,
        tokens_per_char=config.tokens_per_char,
    )
    return Draft(doc, {s.key: rows for s, rows in sections})


def _shorts(
    state: State,
    shared: list[Entity],
    entities: list[Entity],
    ledger: _LedgerRows,
    near: Near | None,
) -> Mapping[str, str]:
    """The short ids of the records rows show or name, unique among every record (`near`
    finds those a slice left out), each made when a row reads it."""
    shown = _shown(entities) | _cited(entities, ledger)
    return LazyShorts(shown, [*state.entities, *(e.id for e in shared)], near)


# --- agent render -----------------------------------------------------------------------------


class Draft:
    """A context document whose rows are made when read: `doc` makes every row (the terminal
    presentation), `fitted` and `render` only as many as decide what the budget keeps."""

    def __init__(self, doc: ContextDoc, rows: dict[str, Rows]) -> None:
        self.head = doc  # its sections' rows are in `rows`
        self.rows = rows

    @classmethod
    def of(cls, doc: ContextDoc) -> Draft:
        return cls(doc, _rows_of(doc))

    def doc(self) -> ContextDoc:
        """The whole document: every row made."""
        sections = [
            msgspec.structs.replace(s, rows=self.rows[s.key].upto(self.rows[s.key].count))
            for s in self.head.sections
        ]
        return msgspec.structs.replace(self.head, sections=sections)

    def render(self, budget_tokens: int | None = None, per_char: float | None = None) -> str:
        """`render_agent` of the document."""
        budget = self.head.budget if budget_tokens is None else budget_tokens
        rate = self.head.tokens_per_char if per_char is None else per_char
        return tokens.within(compose_all(self.fitted(budget, rate)), budget, rate)

    def fitted(self, budget_tokens: int | None = None, per_char: float | None = None) -> ContextDoc:
        """`fit` of the document, making only the rows it weighs."""
        doc = self.head
        budget = doc.budget if budget_tokens is None else budget_tokens
        rate = doc.tokens_per_char if per_char is None else per_char
        counts = {s.key: self.rows[s.key].count for s in doc.sections}
        keep = dict(counts)
        if self._fits(self.rows, keep, budget, rate):
            return msgspec.structs.replace(self.doc(), budget=budget, tokens_per_char=rate)
        bare = _compose(doc, dict.fromkeys(keep, 0), self.rows)
        room = int(budget / rate) - len(bare)
        cut = {key: rows.cut(room) for key, rows in self.rows.items()}

        def fits(key: str, count: int) -> bool:
            return self._fits(cut, {**keep, key: count}, budget, rate)

        for key in (k for k in DROP_ORDER if k in keep and not fits(k, keep[k])):
            if not fits(key, 0):
                keep[key] = 0
                continue
            keep[key] = tokens.most_that_fit(partial(fits, key), keep[key] - 1)
            break
        sections = [
            msgspec.structs.replace(
                s,
                rows=cut[s.key].upto(keep[s.key]),
                pointers=[*_dropped(s, keep[s.key], counts[s.key]), *s.pointers],
            )
            for s in doc.sections
        ]
        return msgspec.structs.replace(doc, sections=sections, budget=budget, tokens_per_char=rate)

    def _fits(self, rows: dict[str, Rows], keep: dict[str, int], budget: int, rate: float) -> bool:
        """Whether the document keeping `keep` rows of each section is within the budget. Rows
        are made in order only until those made cost more than the budget alone: the text
        holds each of them, so it costs more too."""
        length = 0
        for key, count in keep.items():
            for row in itertools.islice(rows[key], count):
                length += len(row.text)
                if tokens.of_length(length, rate) > budget:
                    return False
        return tokens.estimate(_compose(self.head, keep, rows), rate) <= budget


def _rows_of(doc: ContextDoc) -> dict[str, Rows]:
    return {s.key: Rows.of(s.rows) for s in doc.sections}


def _compose(doc: ContextDoc, keep: dict[str, int], rows: Mapping[str, Rows]) -> str:
    lines = [f"# {doc.project}", ""]
    if doc.description:
        lines += [one_line(doc.description), ""]
    for section in doc.sections:
        if section.title:
            lines += [f"## {section.title}", ""]
        count = rows[section.key].count
        kept = keep.get(section.key, count)
        lines += [row.text for row in rows[section.key].upto(kept)]
        lines += [*_dropped(section, kept, count), *section.pointers, ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def compose_all(doc: ContextDoc) -> str:
    """Every row, no budget: the human terminal presentation bypasses the agent budget."""
    return _compose(doc, {s.key: len(s.rows) for s in doc.sections}, _rows_of(doc))


MIN_BUDGET, MAX_BUDGET = 100, 1_000_000  # tokens an agent render may be given


def check_budget(budget: int) -> int:
    """`budget` when it is one the agent render can keep to, else Invalid naming the range."""
    if not MIN_BUDGET <= budget <= MAX_BUDGET:
        raise Invalid(
            f"{{budget}} {budget}: give a token budget from {MIN_BUDGET} to {MAX_BUDGET}", field="budget"
        )
    return budget


def render_agent(doc: ContextDoc, budget_tokens: int | None = None, per_char: float | None = None) -> str:
    """Plain markdown within `budget_tokens` (default: the workspace's `context_budget`): the
    document `fit` keeps, and in the last resort (a header and pointers alone over the budget)
    the text itself cut at the budget with an ellipsis. Everything counts: header, titles,
    pointers, rows."""
    return Draft.of(doc).render(budget_tokens, per_char)


def fit(doc: ContextDoc, budget_tokens: int | None = None, per_char: float | None = None) -> ContextDoc:
    """The document an agent reads within the budget (what `--json` prints as well).

    A document that fits is returned as it is (with the budget it was fitted to). Otherwise
    each row longer than the room the header and pointers leave is cut there, with a marker
    naming the command that shows the record whole; then whole rows are dropped from the
    bottom up: index rows first, then the derived rows (health, deadlines, waiting, in
    progress), then full rows; the header always stays, and each section that lost rows
    gains a pointer naming the command that lists them.
    """
    return Draft.of(doc).fitted(budget_tokens, per_char)


def _cut(row: Row, room: int) -> Row:
    """`row` with its text cut to `room` characters, marked, when it is longer."""
    if len(row.text) <= room:
        return row
    marker = f" {tokens.ELLIPSIS} (cut to fit the budget"
    marker += f"; `self state show {row.id}` shows it whole)" if row.id else ")"
    return msgspec.structs.replace(row, text=row.text[: max(0, room - len(marker))].rstrip() + marker)


def _dropped(section: Section, kept: int, count: int) -> list[str]:
    """The pointer to the rows of `section` past the first `kept` of its `count`, if any."""
    dropped = count - kept
    if not dropped:
        return []
    singular, many = DROPPED[section.key]
    return [pointer(f"{dropped} more {singular if dropped == 1 else many}", section.recover)]
