"""The managed block of AGENTS.md / CLAUDE.md: the operating protocol and the project's
current conventions between two markers, written and found again in a file's text.

Pure: text in, text out. The begin marker carries the version that wrote the block
(`<!-- selfhub:begin v0.1.0 -->`), so an older `self` rewriting a newer block can say so.
A block is found by its marker's prefix, stamped or not; a Superself block (its markers
`<!-- superself:begin vX -->` … `<!-- superself:end -->`, the machine-level ones
`<!-- superself:machine:begin vX -->` … `<!-- superself:machine:end -->`) is taken over where
it stands, never left beside a second block. Not a byte outside the block changes.
"""

from __future__ import annotations

import re
from typing import Literal

import msgspec

from service.core.errors import Invalid

Owner = Literal["selfhub", "superself"]
TOOLS = ("context", "search", "show", "record", "work", "review", "gate")


class Markers(msgspec.Struct, frozen=True):
    """A block's begin prefix and end marker, and those of the blocks it takes over."""

    begin: str
    end: str
    taken_over: tuple[tuple[str, str], ...]


PROJECT = Markers(
    "<!-- selfhub:begin", "<!-- selfhub:end -->", (("<!-- superself:begin", "<!-- superself:end -->"),)
)
MACHINE = Markers(
    "<!-- selfhub:machine:begin",
    "<!-- selfhub:machine:end -->",
    (("<!-- superself:machine:begin", "<!-- superself:machine:end -->"),),
)


class Found(msgspec.Struct, frozen=True):
    """A block in a text: `text[start:end]` from its begin marker through its end marker."""

    start: int
    end: int
    owner: Owner
    version: str | None  # the stamp of the begin marker, None when it has none


PROTOCOL = (
    "This project's shared truth (goals, decisions, conventions, claims, work and its",
    "evidence) is kept by selfhub. Skip this section when neither its MCP tools nor the",
    "`self` command is available.",
    "",
    "- With selfhub's MCP tools (" + ", ".join(f"`{t}`" for t in TOOLS) + ") use them;",
    "  otherwise the `self` command named beside each step.",
    "- Session start: read the context (`context`; `self context`) and take it as current",
    "  truth; look before deciding anew (`search`, `show`; `self search`, `self state show ID`).",
    "- Record what is settled when it is settled: a decision the user confirmed (`record`;",
    '  `self decide "TEXT" --why "..."`), a claim with its grounds (`self claim add "TEXT"',
    '  --supports ID`), a convention (`self convention "TEXT"`). Not confirmed: `--proposed`.',
    "  A correction supersedes (`--supersedes ID`); a record is never edited.",
    '- Work belongs to a unit: `self work add "OUTCOME"`, `self work start ID` (`work`).',
    "- Finish with evidence: a report naming the commit or artifact",
    '  (`self report ID "TEXT" --commit SHA`), then `self work done ID`; a done without',
    '  evidence is refused. Clear owed reviews (`review`; `self review ID --why "..."`).',
    "- A risky action asks the gate first (`gate`; the `self gate` hook).",
)
MACHINE_TEXT = (
    "The `self` command keeps a team's shared project state (goals, decisions, conventions,",
    "claims, work) in selfhub. A project that uses it has its own selfhub block in AGENTS.md",
    "or CLAUDE.md: read the context at session start (`self context`, or selfhub's MCP tool",
    "`context`) and follow that block. Never set a project up on your own: ask the user.",
)


def render(version: str, conventions: list[str]) -> str:
    """The project's block: the protocol, then the current conventions (if any)."""
    lines = [f"{PROJECT.begin} v{version} -->", "## Project state (selfhub)", "", *PROTOCOL]
    if conventions:
        lines += ["", "### Conventions", "", *(f"- {_one_line(c)}" for c in conventions)]
    lines += ["", "This block is rewritten by `self agent block`; write outside it.", PROJECT.end]
    return "\n".join(lines)


def render_machine(version: str) -> str:
    """The machine-level block (~/.claude/CLAUDE.md, ~/.codex/AGENTS.md, ~/.gemini/GEMINI.md)."""
    head = [f"{MACHINE.begin} v{version} -->", "## Project state (selfhub)", ""]
    return "\n".join([*head, *MACHINE_TEXT, MACHINE.end])


def find(text: str, markers: Markers) -> Found | None:
    """The block in `text`: selfhub's if there is one, else one it takes over, else None."""
    owners: list[tuple[str, str, Owner]] = [(markers.begin, markers.end, "selfhub")]
    owners += [(begin, end, "superself") for begin, end in markers.taken_over]
    for begin, end, owner in owners:
        found = _begin(begin).search(text)
        if found is None:
            continue
        stop = text.find(end, found.end())
        if stop == -1:
            raise Invalid(
                f"a block begins ({begin} …) but has no {end}: put the end marker back or "
                "remove the begin line, then run this again",
                field="block",
            )
        return Found(found.start(), stop + len(end), owner, found["version"])
    return None


class Placed(msgspec.Struct, frozen=True):
    """`upsert`'s answer: the new text, the block it replaced (None when it appended one)
    and what it put between the old text and an appended block."""

    text: str
    replaced: Found | None
    separator: str


def upsert(text: str, block: str, markers: Markers) -> Placed:
    """`text` with its block replaced by `block` in place, else `block` appended."""
    found = find(text, markers)
    if found is not None:
        return Placed(text[: found.start] + block + text[found.end :], found, "")
    separator = "" if not text or text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
    return Placed(text + separator + block + "\n", None, separator)


def remove(text: str, markers: Markers, separator: str) -> str:
    """`text` without the block `upsert` appended after `separator` (unchanged without one)."""
    found = find(text, markers)
    if found is None:
        return text
    before, after = text[: found.start], text[found.end :]
    after = after.removeprefix("\n")
    if separator and before.endswith(separator):
        before = before[: -len(separator)]
    return before + after


def newer(stamp: str | None, version: str) -> bool:
    """Whether a block stamped `stamp` was written by a later version than `version`."""
    return stamp is not None and _parts(stamp) > _parts(version)


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(m) for m in re.findall(r"\d+", version.partition("+")[0].partition("-")[0]))


def _begin(prefix: str) -> re.Pattern[str]:
    return re.compile(re.escape(prefix) + r"(?: v(?P<version>[0-9][0-9A-Za-z.+-]*))? -->")


def _one_line(text: str) -> str:
    """A convention as one list item: one line, no marker of a block inside it."""
    return " ".join(text.split()).replace("<!--", "&lt;!--")
