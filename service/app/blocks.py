"""The managed block in the files coding agents read: written, refreshed and taken out.

The block's text is `service/core/agent/block.py`'s; this module reads the conventions it
lists (the local store's project, or the service's), reads and writes the files, and says
when it rewrote a block a later `self` had written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from service import __version__
from service.core.agent import block as agent_block
from service.core.agent.block import MACHINE, PROJECT, Markers
from service.core.errors import Invalid

if TYPE_CHECKING:
    from service.app.workspace import Workspace

PROJECT_FILES = ("AGENTS.md", "CLAUDE.md")
RULES = Path(".cursor") / "rules" / "selfhub.mdc"
MACHINE_FILES = (Path(".claude") / "CLAUDE.md", Path(".codex") / "AGENTS.md", Path(".gemini") / "GEMINI.md")
CONVENTION = "convention"


class Written(msgspec.Struct, frozen=True):
    """What happened to one file: created, appended, replaced, taken over (a Superself
    block replaced) or unchanged; `newer` the later version that had written the block."""

    file: str
    action: str
    separator: str = ""
    newer: str | None = None


def conventions(ws: Workspace) -> list[str]:
    """The texts of the project's current conventions (confirmed, not superseded or retracted)."""
    from service.core.projections import views

    live = views.list_rows(ws.state(ws.require_project()), False)
    return [e.text for e in live if CONVENTION in e.labels and e.status == "confirmed"]


def service_conventions(service: str, project: str | None) -> list[str]:
    """The same, from the workspace at `service` (the token from SELF_TOKEN or the credentials file)."""
    from service.app import servicereads

    return [
        str(row["text"])
        for row in servicereads.get(service, project, "state").json()
        if CONVENTION in row.get("labels", []) and row.get("status") == "confirmed"
    ]


def project_block(found: list[str]) -> str:
    return agent_block.render(__version__, found)


def machine_block() -> str:
    return agent_block.render_machine(__version__)


def write(path: Path, text: str, markers: Markers = PROJECT, create: bool = True) -> Written | None:
    """`path` with its block set to `text`: replaced where it stands, else appended (the file
    made) when `create`; None when nothing was there to refresh and nothing is to be made."""
    try:
        before = path.read_text("utf-8")
    except FileNotFoundError:
        if not create:
            return None
        _write(path, text + "\n")
        return Written(str(path), "created")
    except UnicodeDecodeError:
        raise Invalid(f"{path} is not UTF-8 text; fix it first, nothing was changed", field="file") from None
    if not create and agent_block.find(before, markers) is None:
        return None
    placed = agent_block.upsert(before, text, markers)
    if placed.text != before:
        _write(path, placed.text)
    old = placed.replaced
    newer = (
        old.version
        if old and old.owner == "selfhub" and agent_block.newer(old.version, __version__)
        else None
    )
    if old is None:
        action = "appended"
    elif placed.text == before:
        action = "unchanged"
    else:
        action = "taken over" if old.owner == "superself" else "replaced"
    return Written(str(path), action, placed.separator, newer)


def remove(path: Path, separator: str, created: bool, markers: Markers = PROJECT, head: str = "") -> None:
    """Take out the block `write` put in `path`; the file goes when it held nothing else."""
    try:
        before = path.read_text("utf-8")
    except FileNotFoundError:
        return
    after = agent_block.remove(before, markers, separator)
    if created and after in ("", head):
        path.unlink()
    elif after != before:
        _write(path, after)


def refresh(checkout: Path, found: list[str]) -> list[Written]:
    """The checkout's blocks (AGENTS.md, CLAUDE.md, Cursor's rule file) brought up to date,
    only where a block is already there."""
    text = project_block(found)
    done = [write(checkout / name, text, create=False) for name in (*PROJECT_FILES, RULES)]
    return [w for w in done if w is not None]


def has_block(checkout: Path) -> bool:
    """Whether any file `refresh` would touch holds a block (cheap: no store is read)."""
    return any(holds(checkout / name) for name in (*PROJECT_FILES, RULES))


def holds(path: Path) -> bool:
    """Whether `path` holds a block (selfhub's, or one it takes over)."""
    try:
        return agent_block.find(path.read_text("utf-8"), PROJECT) is not None
    except (OSError, UnicodeDecodeError, Invalid):
        return False


def machine(home: Path) -> list[Written]:
    """The machine-level block in each agent's own instruction file, for the agents this
    machine has (its folder exists under `home`)."""
    text = machine_block()
    done = [write(home / f, text, MACHINE) for f in MACHINE_FILES if (home / f.parent).is_dir()]
    return [w for w in done if w is not None]


def _write(path: Path, data: str) -> None:
    import tempfile  # here: the session hook's context mostly finds its blocks current

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as out:
        out.write(data.encode("utf-8"))
    os.replace(name, path)
