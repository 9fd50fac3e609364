"""Hypothesis strategy: random Docket schema-2 ledgers that Docket's reader accepts.

Records (each kind's ids rising with gaps, relations to earlier records of the kinds Docket allows,
supersession of records not yet superseded), correction lines of the fields Docket lets a
correction change, and review lines pinning a cited ground to the head of its chain.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

PREFIX = {"claim": "c", "decision": "d", "question": "q"}
STATES = {
    "claim": ("unassessed", "accepted", "disputed", "rejected"),
    "decision": ("adopted", "revoked"),
    "question": ("open",),
}
TEXTS = (
    "The API returns JSON.",
    "Parse responses with the standard library.",
    "Should the client cache responses?",
    "Retry a failed job three times",
    "  Stream large bodies to disk  ",
    "Ship one binary per platform.",
)
OPTIONS = ("stdlib json", "orjson", "a cache", "no cache", "Stdlib  JSON")
PATHS = ("src/api/**", "src/client/**", "docs", "installer")
NOTES = ("", "after the v1 release", "2027-01-31", "when the gateway changes")
REFS = st.sampled_from(("docs/api.md", "https://example.org/changelog", "bench/parse.md"))
EVIDENCE = (
    st.fixed_dictionaries(
        {"ref": REFS},
        optional={"checked_at": st.just("2026-09-02T09:00:00+00:00"), "commit": st.just("3f2a9c1")},
    )
    | REFS
)  # a bare reference: the shape before evidence objects


class _Ledger:
    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.lines: list[dict[str, Any]] = []
        self.kinds: dict[str, str] = {}
        self.successor: dict[str, str] = {}
        self.cited: dict[str, list[str]] = {}
        self.series: dict[str, int] = {}
        self.numbers: dict[str, int] = {}  # per kind, as Docket numbers now (one shared sequence before)

    def stamp(self) -> dict[str, str]:
        return {
            "ts": f"2026-09-{1 + len(self.lines) % 28:02d}T08:00:00+00:00",
            "author": "ada",
            "session": "",
            "branch": "main",
        }

    def some(self, choices: list[str], most: int) -> list[str]:
        if not choices:
            return []
        return self.draw(st.lists(st.sampled_from(choices), max_size=most, unique=True))

    def record(self) -> None:
        draw = self.draw
        kind = draw(st.sampled_from(tuple(PREFIX)))
        self.numbers[kind] = self.numbers.get(kind, 0) + draw(st.integers(1, 3))
        record_id = f"{PREFIX[kind]}{self.numbers[kind]}"
        grounded = [r for r, k in self.kinds.items() if k != "question"]
        questions = [r for r, k in self.kinds.items() if k == "question"]
        live = [r for r, k in self.kinds.items() if k == kind and r not in self.successor]
        supports = [
            group for group in (self.some(grounded, 2) for _ in range(draw(st.integers(0, 2)))) if group
        ]
        line: dict[str, Any] = {
            "schema": 2,
            "kind": kind,
            "id": record_id,
            "text": draw(st.sampled_from(TEXTS)),
            "state": draw(st.sampled_from(STATES[kind])),
            **self.stamp(),
            "scope": self.some(list(PATHS), 2),
            "rationale": draw(st.sampled_from(("", "No new dependency.", "  "))),
            "supports": supports,
            "depends_on": self.some(grounded, 2) if kind == "decision" else [],
            "answers": self.some(questions, 1) if kind != "question" else [],
            "supersedes": self.some(live, 1) if draw(st.booleans()) else [],
            "evidence": draw(st.lists(EVIDENCE, max_size=2)),
            "revisit": draw(st.sampled_from(NOTES)),
            "cost_if_wrong": draw(st.sampled_from(("", "A slower client."))),
            "pinned": draw(st.booleans()),
        }
        if line["supersedes"] and draw(st.booleans()):
            line["supersede_reason"] = draw(st.sampled_from(("restate", "revise", "reverse")))
        if kind == "decision":
            line["choice"] = draw(st.sampled_from(OPTIONS))
            line["alternatives"] = draw(st.lists(st.sampled_from(OPTIONS), max_size=3))
            if draw(st.booleans()):
                line["decided_by"] = draw(st.sampled_from(("", "grace")))
        for old in line["supersedes"]:
            self.successor[old] = record_id
        self.kinds[record_id] = kind
        self.cited[record_id] = [m for group in supports for m in group] + line["depends_on"]
        self.lines.append(line)

    def head(self, record_id: str) -> str:
        while record_id in self.successor:
            record_id = self.successor[record_id]
        return record_id

    def numbered(self, target: str, infix: str) -> str:
        key = f"{target}.{infix}"
        self.series[key] = self.series.get(key, 0) + self.draw(st.integers(1, 2))
        return f"{target}.{infix}{self.series[key]}"

    def correction(self) -> None:
        draw = self.draw
        target = draw(st.sampled_from(sorted(self.kinds)))
        choices: dict[str, Any] = {
            "text": st.sampled_from(TEXTS),
            "rationale": st.sampled_from(("", "Measured on the bench.")),
            "scope": st.lists(st.sampled_from(PATHS), max_size=2),
            "evidence": st.lists(EVIDENCE, max_size=1),
            "revisit": st.sampled_from(NOTES),
            "cost_if_wrong": st.sampled_from(("", "Rework of the client.")),
            "pinned": st.booleans(),
        }
        if self.kinds[target] == "decision":
            choices |= {
                "alternatives": st.lists(st.sampled_from(OPTIONS), max_size=2),
                "decided_by": st.just("grace"),
            }
        names = draw(st.lists(st.sampled_from(sorted(choices)), min_size=1, max_size=3, unique=True))
        fields = {name: draw(choices[name]) for name in names}
        line_id = self.numbered(target, "")
        self.lines.append(
            {
                "schema": 2,
                "kind": "correction",
                "id": line_id,
                "corrects": target,
                "fields": fields,
                "reason": "",
                **self.stamp(),
            }
        )

    def review(self) -> None:
        draw = self.draw
        graded = sorted(r for r, k in self.kinds.items() if k != "question")
        if not graded:
            return
        target = draw(st.sampled_from(graded))
        cited = self.cited[target] or sorted(self.kinds)
        chosen = cited if draw(st.booleans()) else self.some(cited, 2)
        grounds = {ground: self.head(ground) for ground in chosen}
        if not grounds:
            return
        line_id = self.numbered(target, "r")
        self.lines.append(
            {
                "schema": 2,
                "kind": "review",
                "id": line_id,
                "reviews": target,
                "grounds": grounds,
                "note": "",
                **self.stamp(),
            }
        )


@st.composite
def docket_ledgers(draw: st.DrawFn, max_lines: int = 14) -> list[dict[str, Any]]:
    """The lines of a random Docket ledger: a record first, then records, corrections, reviews."""
    ledger = _Ledger(draw)
    ledger.record()
    for _ in range(draw(st.integers(0, max_lines - 1))):
        step = draw(st.sampled_from(("record", "record", "record", "correction", "review")))
        getattr(ledger, step)()
    return ledger.lines


RECORD_KINDS = ("claim", "decision", "question")


def renumbered(ledger: list[dict[str, Any]], shared: bool) -> list[dict[str, Any]]:
    """The ledger with its records numbered in one sequence across kinds (`shared`) or per
    kind, every reference renamed to match."""
    names: dict[str, str] = {}
    counts: dict[str, int] = {}
    for line in ledger:
        if line["kind"] in RECORD_KINDS:
            key = "all" if shared else line["kind"]
            counts[key] = counts.get(key, 0) + 1
            names[line["id"]] = f"{line['id'][0]}{counts[key]}"
    return [_renamed(line, names) for line in ledger]


def _renamed(line: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    def name(value: str) -> str:
        head, dot, rest = value.partition(".")
        return names.get(head, head) + dot + rest

    out = dict(line)
    out["id"] = name(line["id"])
    for field in ("depends_on", "answers", "supersedes"):
        if field in out:
            out[field] = [name(v) for v in out[field]]
    if "supports" in out:
        out["supports"] = [[name(v) for v in group] for group in out["supports"]]
    for field in ("corrects", "reviews"):
        if field in out:
            out[field] = name(out[field])
    if "grounds" in out:
        out["grounds"] = {name(k): name(v) for k, v in out["grounds"].items()}
    return out
