"""Hypothesis strategies shared by the test layers: random, valid event histories."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
from hypothesis import strategies as st

from service.core.events import ids
from service.core.events.events import Event, Origin

START_MS = 1_780_000_000_000
MAX_RANDOM = (1 << 80) - 1


def iso(ms: int) -> str:
    stamp = datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.")
    return f"{stamp}{ms % 1000:03d}Z"


def raw(payload: object) -> msgspec.Raw:
    return msgspec.Raw(msgspec.json.encode(payload, order="sorted"))


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=20)
CRITERIA = ("tests pass", "docs written", "reviewed")
LABELS = ("goal", "decision", "work", "milestone", "convention", "idea", "note")
EXPOSURES = ("full", "index", "search")
KINDS = (
    "new",
    "new",
    "new-superseding",
    "confirm",
    "superseded",
    "retracted",
    "placed",
    "placed-pair",
    "declined",
    "linked",
    "unlinked",
    "covered",
    "started",
    "blocked",
    "unblocked",
    "done",
    "done-with-report",
    "retired",
    "restored",
    "report",
    "run-started",
    "run-exited",
    "unknown",
    "malformed",
    "legacy-goal",
    "legacy-decision",
    "legacy-decision-confirmed",
    "legacy-convention",
    "legacy-convention-dropped",
    "legacy-work",
    "legacy-work-done",
    "legacy-work-step",
    "legacy-objective",
    "legacy-objective-step",
    "legacy-milestone",
    "legacy-milestone-step",
    "legacy-proposal",
    "project",
)


class History:
    """Builds one random but valid history: ids from the clock, entity ids from the log."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.now = START_MS
        self.last: str | None = None
        self.entities: list[str] = []
        self.events: list[Event] = []

    def tick(self) -> tuple[str, str]:
        # The wall clock jitters and sometimes goes backwards; ids must still rise.
        self.now += self.draw(st.integers(-3, 40))
        event_id = ids.next_id(self.last, self.now, self.draw(st.integers(0, MAX_RANDOM)))
        self.last = event_id
        return event_id, iso(ids.time_ms(event_id))

    def pick(self) -> str:
        if not self.entities or self.draw(st.integers(0, 15)) == 0:
            return "01zzzzzzzzzzzzzzzzzzzzzzzz"  # names no record
        return self.draw(st.sampled_from(self.entities))

    def add(
        self,
        kind: str,
        payload: object,
        *,
        confirmed: bool | None = None,
        refs: dict[str, object] | None = None,
        at: tuple[str, str] | None = None,
    ) -> str:
        event_id, ts = at or self.tick()
        if confirmed is None:
            confirmed = self.draw(st.booleans())
        actor = "human" if confirmed else "agent"
        self.events.append(Event(event_id, ts, kind, Origin(actor, confirmed), "app", raw(payload), refs))
        return event_id

    def assertion(self, supersedes: str | None) -> None:
        event_id, ts = self.tick()
        links = []
        if supersedes is not None:
            links.append({"type": "supersedes", "target": supersedes})
        if self.entities and self.draw(st.booleans()):
            links.append({"type": "member-of", "target": self.pick()})
        payload = {
            "entity": event_id,
            "text": self.draw(TEXT),
            "labels": [self.draw(st.sampled_from(LABELS))],
            "links": links,
            "criteria": self.draw(st.lists(st.sampled_from(CRITERIA), max_size=2, unique=True)),
            "exposure": self.draw(st.sampled_from(EXPOSURES)),
            "priority": self.draw(st.none() | st.integers(0, 50)),
        }
        confirmed = self.draw(st.booleans())
        kind = "entity.confirmed" if confirmed else "entity.proposed"
        self.add(kind, payload, confirmed=confirmed, at=(event_id, ts))
        self.entities.append(event_id)

    def step(self) -> None:
        kind = self.draw(st.sampled_from(KINDS))
        if kind == "new":
            self.assertion(None)
        elif kind == "new-superseding":
            self.assertion(self.pick())
        elif kind == "confirm":
            self.add("entity.confirmed", {"entity": self.pick()}, confirmed=True)
        elif kind == "superseded":
            self.add("entity.superseded", {"entity": self.pick(), "by": self.pick(), "why": "x"})
        elif kind == "retracted":
            self.add("entity.retracted", {"entity": self.pick(), "why": "withdrawn"})
        elif kind in ("placed", "placed-pair"):
            payload: dict[str, object] = {
                "entity": self.pick(),
                "exposure": self.draw(st.sampled_from(EXPOSURES)),
                "priority": self.draw(st.integers(0, 60)),
                "why": "room",
            }
            if kind == "placed-pair":
                payload["pair"] = self.pick()
            self.add("entity.placed", payload)
        elif kind == "declined":
            self.add("entity.declined", {"entity": self.pick(), "why": "not now"})
        elif kind in ("linked", "unlinked"):
            link_type = self.draw(st.sampled_from(("member-of", "relates")))
            link = {"type": link_type, "target": self.pick()}
            self.add(f"entity.{kind}", {"entity": self.pick(), "link": link})
        elif kind == "covered":
            self.add(
                "entity.covered",
                {"entity": self.pick(), "criterion": self.draw(st.sampled_from(CRITERIA))},
            )
        elif kind in ("started", "unblocked", "done", "retired", "restored"):
            self.add(f"entity.{kind}", {"entity": self.pick()})
        elif kind == "blocked":
            self.add("entity.blocked", {"entity": self.pick(), "on": "dependency"})
        elif kind == "done-with-report":
            work = self.pick()
            event_id, ts = self.tick()
            self.add("report.added", {"text": "shipped it"}, refs={"work": work}, at=(event_id, ts))
            done_id = ids.next_id(event_id, ids.time_ms(event_id), 0)
            self.last = done_id
            self.add("entity.done", {"entity": work}, at=(done_id, ts))
        elif kind == "report":
            payload = {"text": self.draw(TEXT)}
            if self.draw(st.booleans()):
                payload["commit"] = "9d2f4fc49cf782c5268b31a2e0bb8740a684c3b5"
            if self.draw(st.booleans()):
                payload["artifact"] = "dist/app.whl"
            if self.draw(st.booleans()):
                self.add("report.added", {**payload, "work": self.pick()})
            else:
                self.add("report.added", payload, refs={"work": self.pick(), "branch": "main"})
        elif kind == "run-started":
            self.add("work.run-started", {"work": self.pick()})
        elif kind == "run-exited":
            code = self.draw(st.integers(-1, 2))
            self.add("work.run-exited", {"work": self.pick(), "code": code})
        elif kind == "unknown":
            self.add("zz.future-kind", {"anything": [1, "two", None]})
        elif kind == "malformed":
            self.add("entity.placed", {"entity": 7, "priority": "high"})
        elif kind.startswith("legacy-"):
            self.legacy(kind.removeprefix("legacy-"))
        elif kind == "project":
            slug = self.draw(st.sampled_from(("app", "web", "ops")))
            verb = self.draw(st.sampled_from(("added", "archived", "restored")))
            self.add(f"project.{verb}", {"slug": slug, "why": "x"})

    def legacy(self, kind: str) -> None:
        """Superself's pre-entity kinds, in the shapes its verbs wrote them."""
        text = self.draw(TEXT)
        if kind == "goal":
            self.entities.append(self.add("goal.set", {"text": text}))
        elif kind in ("decision", "convention"):
            refs = {"supersedes": [self.pick()]} if self.draw(st.booleans()) else None
            verb = self.draw(st.sampled_from(("proposed", "confirmed"))) if kind == "decision" else "added"
            self.entities.append(self.add(f"{kind}.{verb}", {"text": text}, refs=refs))
        elif kind == "decision-confirmed":
            answers = (("confirmed", "confirms"), ("retracted", "retracts"), ("declined", "declines"))
            verb, key = self.draw(st.sampled_from(answers))
            self.add(f"decision.{verb}", {"why": "x"} if verb != "confirmed" else {}, refs={key: self.pick()})
        elif kind == "convention-dropped":
            self.add("convention.dropped", {"why": "obsolete"}, refs={"supersedes": [self.pick()]})
        elif kind in ("work", "objective", "proposal"):
            event_id, ts = self.tick()
            payload: dict[str, object] = {"outcome": text}
            if kind == "work":
                payload["work"] = event_id
            elif kind == "objective":
                proposed = self.draw(st.booleans())
                payload |= {"objective": event_id, "target": "2099-01-01", "proposed": proposed}
            else:
                payload["objective"] = self.pick()
            verb = "proposed" if kind == "proposal" else "created"
            legacy_kind = "work" if kind == "proposal" else kind
            self.add(f"{legacy_kind}.{verb}", payload, refs={"supersedes": [self.pick()]}, at=(event_id, ts))
            self.entities.append(event_id)
        elif kind == "milestone":
            event_id, ts = self.tick()
            exit_ = [{"id": f"c{n}", "text": c} for n, c in enumerate(CRITERIA[:2], 1)]
            payload = {"objective": self.pick(), "milestone": event_id, "outcome": text, "exit": exit_}
            if self.draw(st.booleans()):
                payload["supersedes"] = self.pick()
            self.add("milestone.created", payload, at=(event_id, ts))
            self.entities.append(event_id)
        elif kind in ("work-done", "work-step"):
            steps = ("started", "blocked", "unblocked", "retired", "linked")
            verbs = ("done",) if kind == "work-done" else steps
            verb = self.draw(st.sampled_from(verbs))
            target = {"milestone": self.pick()} if verb == "linked" else {"on": "decision", "why": "x"}
            self.add(f"work.{verb}", {"work": self.pick(), **target, "successor": self.pick()})
        elif kind == "objective-step":
            verb = self.draw(st.sampled_from(("confirmed", "declined", "revised", "closed")))
            as_ = self.draw(st.sampled_from(("reached", "dropped")))
            self.add(f"objective.{verb}", {"objective": self.pick(), "why": "x", "as": as_, "target": None})
        elif kind == "milestone-step":
            verb = self.draw(st.sampled_from(("covered", "rechecked", "reached", "dropped", "revised")))
            payload = {"milestone": self.pick(), "criterion": "c1", "why": "x", "dropExit": ["c2"]}
            self.add(f"milestone.{verb}", payload)


@st.composite
def histories(draw: st.DrawFn, max_steps: int = 40) -> list[Event]:
    history = History(draw)
    for _ in range(draw(st.integers(1, max_steps))):
        history.step()
    return history.events


SEARCH_LOGS = ("app", "web", "")  # the selected project, another one, the workspace's own log


@st.composite
def search_logs(
    draw: st.DrawFn, words: tuple[str, ...], kinds: tuple[str, ...], max_steps: int
) -> dict[str, list[Event]]:
    """A random history for `app`, then records of `kinds` in every log from the small
    vocabulary `words`, so queries meet many records, tie on counts and share creation times."""
    events: dict[str, list[Event]] = {log: [] for log in SEARCH_LOGS}
    events["app"] = draw(histories(max_steps=max_steps))
    last = events["app"][-1].id if events["app"] else None
    ms = ids.time_ms(last) if last else START_MS
    for _ in range(draw(st.integers(0, 14))):
        ms += draw(st.integers(0, 1))  # the same millisecond: the same `created`
        last = ids.next_id(last, ms, draw(st.integers(0, MAX_RANDOM)))
        log = draw(st.sampled_from(SEARCH_LOGS))
        payload = {
            "entity": last,
            "text": " ".join(draw(st.lists(st.sampled_from(words), min_size=1, max_size=4))),
            "labels": [draw(st.sampled_from(kinds))],
            "links": [],
            "criteria": [],
            "exposure": draw(st.sampled_from(EXPOSURES)),
            "priority": None,
        }
        at = iso(ids.time_ms(last))
        events[log].append(
            Event(last, at, "entity.confirmed", Origin("human", True), log, raw(payload), None)
        )
    return events


@st.composite
def search_queries(draw: st.DrawFn, texts: list[str], syntax: tuple[str, ...]) -> str:
    """Zero to three terms: pieces of the records' texts, FTS5 syntax, or anything."""
    pieces = []
    for _ in range(draw(st.integers(0, 3))):
        source = draw(st.sampled_from(["text", "text", "syntax", "any"] if texts else ["syntax", "any"]))
        if source == "text":
            text = draw(st.sampled_from(texts))
            start = draw(st.integers(0, max(len(text) - 1, 0)))
            pieces.append(text[start : start + draw(st.integers(1, 6))])
        elif source == "syntax":
            pieces.append(draw(st.sampled_from(syntax)))
        else:
            pieces.append(draw(st.text(min_size=1, max_size=5)))
    return " ".join(pieces)
