"""What Docket derives from a ledger: its derived views, rebuilt as a checker for tests.

Docket (NovusEdge/docket) prints, for `list --json --superseded`, each record with views it
computes at read time: `project` in `docket/ledger.py` (corrections folded in by
`corrections.py: fold`, reviews attached by `reviews.py: fold`, then retirement,
`_decision_applicability` and `resolved_by`) and `evaluate` in `docket/support.py` (support,
review owed, lost grounds). This module states those rules again, from reading that source,
so a test can hold what Docket would show for a file `self export docket` wrote against
selfhub's own rows. Nothing here is Docket's code; only the rules are.
`tests/fixtures/conformance/docket-real/expected.json` (what Docket printed for its own
ledger) is the fixed point these rules reproduce.

The rules are those of Docket's current source, the version whose reader numbers each kind
on its own (`docket_reader.PER_KIND`), which reads every file the export writes. Two of them
changed from the earlier stored versions (`ledger.py` at `049e5aa`, `support.py` at
`55d7239`), and `expected.json` cannot tell them apart (no current decision of that ledger
depends on a superseded record, and no review there pins a ground that inherits a flag):

- a prerequisite is followed through supersessions to the head of its chain
  (`ledger._decision_applicability`, with `support.head_of`); the earlier version asked
  whether the record cited was itself available, so any superseded prerequisite blocked;
- a review's pin lifts a ground's own causes and the ground is tested again for the two it
  inherits, `blocked` and `flagged` (`support.evaluate`, its `ground`; `support.INHERITED`);
  the earlier version cleared a pinned ground whatever flagged it.

The rules, in short:

- corrections: a correction line's fields replace the record's, in line order;
- reviews: each review line's grounds (ground → head) pin flags on the record it reviews;
- retired_by: the record whose `supersedes` names it;
- applicable (decisions): adopted, not retired, and every `depends_on` available, each
  followed to the head of its chain: a `reverse` crossed makes it unavailable, naming the
  head; otherwise the head is asked — a claim available when accepted, a decision when
  applicable, one whose walk comes back to a decision still being asked after a supersession
  unavailable, naming the head. `blocked_by` lists, in file order of the decisions and once
  each, every unavailable prerequisite as cited and then what made it so (a retired or
  revoked decision names itself);
- resolved_by (questions): the current accepted claims and current adopted applicable
  decisions that answer it; a question with one is `resolved`;
- support (claims and decisions): a citation follows supersessions to the head of its chain,
  collecting each successor's `supersede_reason` (default `revise`). A ground is unsupported
  when a `reverse` was crossed, the head is rejected or revoked, or the head is itself
  unsupported; flagged when the head is circular, a `revise` was crossed, the head is
  unassessed or disputed, the head is a decision not applicable (`blocked`), or the head is
  itself flagged; the worst cause wins, the first of equals. A flagged ground the record's
  reviews pinned at that head loses its own causes and stays flagged only for an inherited
  one (`blocked`, else `flagged` when the head is flagged and not circular). A set counts as
  its worst ground, a record as its best set (clean with no sets). A decision whose
  prerequisite was revised (no reversal on the way) and not pinned is flagged too. Levels
  are the least fixed point from unsupported; records whose level differs from the greatest
  fixed point (from clean) are circular and flagged, and circular records a review clears are
  cleared from the frontier up. `review_owed` lists, for a flagged record, each flagged
  ground of each flagged set (and the revised prerequisites); `lost_grounds`, for an
  unsupported record, each unsupported ground.
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_REASON = "revise"
UNSUPPORTED, FLAGGED, CLEAN = 0, 1, 2
NAMES = {UNSUPPORTED: "unsupported", FLAGGED: "flagged", CLEAN: "clean"}


def views(text: str) -> list[dict[str, Any]]:
    """Each record of a ledger file with the views Docket's `list --json --superseded` shows."""
    lines = [json.loads(line) for line in text.splitlines() if line.strip()]
    entries = _folded(lines)
    retired = {target: e["id"] for e in entries for target in e["supersedes"]}
    applicable, blocked = _applicability(entries, retired)
    resolved = _resolution(entries, retired, applicable)
    support = _support(entries, retired, applicable)
    out: list[dict[str, Any]] = []
    for e in entries:
        row: dict[str, Any] = {
            "id": e["id"],
            "kind": e["kind"],
            "text": e["text"],
            "state": "resolved" if e["kind"] == "question" and resolved[e["id"]] else e["state"],
            "recorded_state": e["state"],
            "retired_by": retired.get(e["id"], ""),
            "resolved_by": resolved[e["id"]],
        }
        if e["kind"] == "decision":
            row["applicable"] = applicable[e["id"]]
            row["blocked_by"] = blocked[e["id"]]
        if e["kind"] in ("claim", "decision"):
            row |= support[e["id"]]
        out.append(row)
    return out


def _folded(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records with their corrections applied and their reviews attached, in line order."""
    records: dict[str, dict[str, Any]] = {}
    for line in lines:
        if line["kind"] == "correction":
            records[line["corrects"]] |= line["fields"]
        elif line["kind"] == "review":
            target = records[line["reviews"]]
            target["reviews"] = [*target.get("reviews", []), dict(line["grounds"])]
        elif line["kind"] in ("claim", "decision", "question"):
            records[line["id"]] = dict(line)
    return list(records.values())


def _head(ident: str, retired: dict[str, str], reason: dict[str, str]) -> tuple[str, list[str]]:
    """`support.head_of`: the record a citation comes to, and the reasons crossed on the way."""
    crossed: list[str] = []
    while ident in retired and len(crossed) <= len(retired):  # Docket's reader refuses a loop
        ident = retired[ident]
        crossed.append(reason[ident])
    return ident, crossed


class _Loop(Exception):
    """A prerequisite walk came back, after a supersession, to a decision still being asked."""


def _applicability(
    entries: list[dict[str, Any]], retired: dict[str, str]
) -> tuple[dict[str, bool], dict[str, list[str]]]:
    """`ledger._decision_applicability`: each decision in file order, each prerequisite
    followed to the head of its chain."""
    by_id = {e["id"]: e for e in entries}
    reason = {e["id"]: e.get("supersede_reason", DEFAULT_REASON) for e in entries}
    applicable: dict[str, bool] = {}
    blocked: dict[str, list[str]] = {}
    asking: set[str] = set()
    hops = [0]

    def check(ident: str) -> tuple[bool, list[str]]:
        if ident in asking:
            if hops[0]:
                raise _Loop
            raise ValueError(f"{ident}: depends_on forms a cycle")  # Docket refuses the ledger
        asking.add(ident)
        try:
            return answer(ident)
        finally:
            asking.discard(ident)

    def prerequisite(cited: str) -> tuple[bool, list[str]]:
        head, crossed = _head(cited, retired, reason)
        if "reverse" in crossed:
            return False, [head]
        if head == cited:
            return check(head)
        hops[0] += 1
        try:
            return check(head)
        except _Loop:
            return False, [head]
        finally:
            hops[0] -= 1

    def answer(ident: str) -> tuple[bool, list[str]]:
        if ident in applicable:
            return applicable[ident], blocked[ident]
        e = by_id[ident]
        if e["kind"] == "claim":
            ok = e["state"] == "accepted" and ident not in retired
            return ok, [] if ok else [ident]
        if e["kind"] != "decision":
            return False, [ident]
        if e["state"] != "adopted" or ident in retired:
            applicable[ident], blocked[ident] = False, [ident]
            return False, [ident]
        blockers: list[str] = []
        for dependency in e["depends_on"]:
            ok, why = prerequisite(dependency)
            for name in [dependency, *why] if not ok else []:
                if name not in blockers:
                    blockers.append(name)
        applicable[ident], blocked[ident] = not blockers, blockers
        return not blockers, blockers

    for e in entries:
        if e["kind"] == "decision":
            check(e["id"])
    return applicable, blocked


def _resolution(
    entries: list[dict[str, Any]], retired: dict[str, str], applicable: dict[str, bool]
) -> dict[str, list[str]]:
    resolved: dict[str, list[str]] = {e["id"]: [] for e in entries}
    for e in entries:
        if e["kind"] == "question" or e["id"] in retired:
            continue
        if (e["kind"] == "claim" and e["state"] == "accepted") or (
            e["kind"] == "decision" and e["state"] == "adopted" and applicable.get(e["id"], False)
        ):
            for question in e["answers"]:
                if question in resolved:
                    resolved[question].append(e["id"])
    return resolved


class _Support:
    """Docket's truth maintenance over one ledger's folded records."""

    def __init__(self, entries: list[dict[str, Any]], retired: dict[str, str], applicable: dict[str, bool]):
        self.by_id = {e["id"]: e for e in entries}
        self.reason = {e["id"]: e.get("supersede_reason", DEFAULT_REASON) for e in entries}
        self.graded = [e for e in entries if e["kind"] in ("claim", "decision")]
        self.retired = retired
        self.applicable = applicable
        self.circular: set[str] = set()
        self.pins = {
            e["id"]: {pair for review in e.get("reviews", []) for pair in review.items()} for e in self.graded
        }

    def head(self, ident: str) -> tuple[str, list[str]]:
        return _head(ident, self.retired, self.reason)

    def ground(self, owner: str, cited: str, level: dict[str, int]) -> tuple[int, str, str]:
        head, crossed = self.head(cited)
        target = self.by_id[head]
        value, because = CLEAN, ""
        for applies, to, why in (
            ("reverse" in crossed, UNSUPPORTED, "reverse"),
            (target["state"] in ("rejected", "revoked"), UNSUPPORTED, target["state"]),
            (level.get(head) == UNSUPPORTED, UNSUPPORTED, "unsupported"),
            (head in self.circular, FLAGGED, "circular"),
            ("revise" in crossed, FLAGGED, "revise"),
            (target["state"] in ("unassessed", "disputed"), FLAGGED, target["state"]),
            (target["kind"] == "decision" and self.applicable.get(head) is False, FLAGGED, "blocked"),
            (level.get(head) == FLAGGED, FLAGGED, "flagged"),
        ):
            if applies and to < value:
                value, because = to, why
        if value == FLAGGED and (cited, head) in self.pins[owner]:  # the pin lifts the ground's own causes
            value, because = CLEAN, ""
            if target["kind"] == "decision" and self.applicable.get(head) is False:
                value, because = FLAGGED, "blocked"
            elif level.get(head) == FLAGGED and head not in self.circular:
                value, because = FLAGGED, "flagged"
        return value, head, because

    def prerequisites(self, e: dict[str, Any]) -> list[tuple[str, str]]:
        owed: list[tuple[str, str]] = []
        for cited in e.get("depends_on", []):
            head, crossed = self.head(cited)
            if "revise" in crossed and "reverse" not in crossed and (cited, head) not in self.pins[e["id"]]:
                owed.append((cited, head))
        return owed

    def level_of(self, e: dict[str, Any], level: dict[str, int]) -> int:
        value = CLEAN
        if e["supports"]:
            value = max(min(self.ground(e["id"], c, level)[0] for c in group) for group in e["supports"])
        if self.prerequisites(e):
            value = min(value, FLAGGED)
        return value

    def fixed_point(self, start: int) -> dict[str, int]:
        level = {e["id"]: start for e in self.graded}
        changed = True
        while changed:
            changed = False
            for e in self.graded:
                new = self.level_of(e, level)
                if new != level[e["id"]]:
                    level[e["id"]], changed = new, True
        return level

    def levels(self) -> dict[str, int]:
        low, high = self.fixed_point(UNSUPPORTED), self.fixed_point(CLEAN)
        self.circular |= {i for i in low if low[i] != high[i]}
        level = {i: FLAGGED if i in self.circular else low[i] for i in low}
        changed = True
        while changed:
            changed = False
            for e in self.graded:
                if e["id"] in self.circular and self.level_of(e, level) == CLEAN:
                    level[e["id"]] = CLEAN
                    self.circular.discard(e["id"])
                    changed = True
        return level

    def row(self, e: dict[str, Any], level: dict[str, int]) -> dict[str, Any]:
        status = level[e["id"]]
        owed: list[dict[str, str]] = []
        lost: list[dict[str, str]] = []
        for group in e["supports"]:
            values = [(c, *self.ground(e["id"], c, level)) for c in group]
            worst = min(value for _, value, _, _ in values)
            for cited, value, head, because in values:
                if status == FLAGGED and worst == FLAGGED and value == FLAGGED:
                    item = {"ground": cited, "head": head, "because": because}
                    owed += [item] if item not in owed else []
                if status == UNSUPPORTED and value == UNSUPPORTED:
                    gone = {"ground": cited, "because": because}
                    lost += [gone] if gone not in lost else []
        if status == FLAGGED:
            for cited, head in self.prerequisites(e):
                item = {"ground": cited, "head": head, "because": "revise"}
                owed += [item] if item not in owed else []
        return {"support": NAMES[status], "review_owed": owed, "lost_grounds": lost}


def _support(
    entries: list[dict[str, Any]], retired: dict[str, str], applicable: dict[str, bool]
) -> dict[str, dict[str, Any]]:
    support = _Support(entries, retired, applicable)
    level = support.levels()
    return {e["id"]: support.row(e, level) for e in support.graded}


# --- selfhub's rows beside Docket's reading of the export ----------------------------------


def ours(state: Any, names: dict[str, str]) -> dict[str, dict[str, Any]]:
    """selfhub's derived views of the records an export wrote, in Docket's words and by the
    ids the export gave them (`names`: id here → id in the file)."""
    from service.core.ledger.derived import derive

    rows: dict[str, dict[str, Any]] = {}
    for record_id, view in derive(state, list(names)).items():
        if record_id not in names:
            continue
        fact = state.ledger[record_id]
        row: dict[str, Any] = {
            "id": names[record_id],
            "kind": view.kind,
            "state": "resolved" if view.resolved else view.state,  # Docket derives a question's
            "retired_by": names.get(fact.superseded_by or "", ""),
            "resolved_by": [names[i] for i in view.resolved_by if i in names],
        }
        if view.kind == "decision":
            row["applicable"] = bool(view.applicable)
            row["blocked_by"] = [names.get(i, i) for i in view.blocked_by]
        if view.kind in ("claim", "decision"):
            row["support"] = view.support
            row["review_owed"] = [
                {
                    "ground": names.get(o.ground, o.ground),
                    "head": names.get(o.head, o.head),
                    "because": o.reason,
                }
                for o in view.review_owed
            ]
            row["lost_grounds"] = [
                {"ground": names.get(lost.ground, lost.ground), "because": lost.reason} for lost in view.lost
            ]
        rows[names[record_id]] = row
    return rows


def theirs(text: str) -> dict[str, dict[str, Any]]:
    """Docket's reading of a file, the keys `ours` has, by id."""
    keys = ("id", "kind", "state", "retired_by", "resolved_by", "applicable", "blocked_by")
    keys += ("support", "review_owed", "lost_grounds")
    return {row["id"]: {k: row[k] for k in keys if k in row} for row in views(text)}


def disagreements(state: Any) -> list[str]:
    """Each record whose views differ between selfhub and Docket's reading of the export."""
    from service.core.interop import docket_out
    from tests.support import docket_reader

    written = docket_out.docket_export(state)
    text = "".join(line + "\n" for line in written.texts)
    try:
        for version in (docket_reader.V049E5AA, docket_reader.PER_KIND):  # the rules above are the latter's
            docket_reader.read(text, version)
    except docket_reader.Refused as exc:
        return [f"Docket's reader refuses the export: {exc}"]
    mine = ours(state, written.names)
    read = theirs(text)
    return [
        f"{i}: ours {mine.get(i)} != Docket's {read.get(i)}"
        for i in sorted(mine.keys() | read.keys())
        if mine.get(i) != read.get(i)
    ]
