"""Commands as data: one frozen struct per write a front end can ask for, and the rule of
which log each goes to.

A command decoded from CLI flags and the same command decoded from a JSON body
(`msgspec.json.decode(body, type=AnyCommand)`, tagged by its `command` field) are equal
values; `service/core/commands/handle.py` turns one into events (or a refusal) on a log's state.
Field names are the ones errors name (`ModelError.fields`); the CLI renders them as flags.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

from service.core.errors import Invalid
from service.core.ledger.ledger import LedgerInput

Log = Literal["workspace", "project", "record"]  # the workspace's, the project's, the record's


class Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="command", forbid_unknown_fields=True):
    """What every command shares (nothing yet but the tag)."""


class Add(LedgerInput, frozen=True, kw_only=True, tag="add", tag_field="command", forbid_unknown_fields=True):
    """A new record; `preset` names an alias row (goal, decide, …) whose label and placement
    apply unless a field says otherwise. The ledger's fields (LedgerInput) apply to claims,
    decisions and questions; `reads`, `writes` and `intends` to work units. A record whose label
    and text a live record of its log has already is refused unless `duplicate`."""

    text: str
    preset: str | None = None
    labels: tuple[str, ...] = ()
    exposure: str | None = None
    priority: int | None = None
    scope: str = "project"
    criteria: tuple[str, ...] = ()
    target: str | None = None
    why: str | None = None
    supersedes: str | None = None
    demote: tuple[str, ...] = ()
    proposed: bool = False
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    intends: tuple[str, ...] = ()
    duplicate: bool = False  # add it though a live record has its label and text


class OnRecord(Command, frozen=True, kw_only=True):
    """A command on an existing record, written to the log that holds it."""

    record: str


class UnitVerb(OnRecord, frozen=True, kw_only=True):
    """A lifecycle verb; `unit`: as `self work …` offers it, refused on anything but a work unit."""

    unit: bool = False


class Place(OnRecord, tag="place", frozen=True, kw_only=True):
    exposure: str | None = None
    priority: int | None = None
    scope: str | None = None
    why: str | None = None
    demote: tuple[str, ...] = ()
    proposed: bool = False


class Confirm(OnRecord, tag="confirm", frozen=True, kw_only=True):
    pass


class Decline(OnRecord, tag="decline", frozen=True, kw_only=True):
    """A person's no to a proposal: a proposed record withdrawn, or a placement waiting on a
    record dropped; `why` defaults to "declined"."""

    why: str | None = None


class Retract(OnRecord, tag="retract", frozen=True, kw_only=True):
    why: str


class Start(UnitVerb, tag="start", frozen=True, kw_only=True):
    head: str | None = None  # the linked checkout's commit as the work starts


class Block(UnitVerb, tag="block", frozen=True, kw_only=True):
    on: str | None = None
    why: str | None = None


class Unblock(UnitVerb, tag="unblock", frozen=True, kw_only=True):
    pass


class Done(UnitVerb, tag="done", frozen=True, kw_only=True):
    report: str | None = None
    commit: str | None = None
    artifact: str | None = None
    why: str | None = None
    head: str | None = None  # the linked checkout's commit as the work ends


class Retire(UnitVerb, tag="retire", frozen=True, kw_only=True):
    why: str | None = None


class Restore(UnitVerb, tag="restore", frozen=True, kw_only=True):
    why: str | None = None


class Cover(OnRecord, tag="cover", frozen=True, kw_only=True):
    criterion: str
    why: str | None = None


class Link(OnRecord, tag="link", frozen=True, kw_only=True):
    target: str
    link_type: str = "relates"
    remove: bool = False


class Report(OnRecord, tag="report", frozen=True, kw_only=True):
    text: str
    commit: str | None = None
    artifact: str | None = None


class RunStarted(OnRecord, tag="run-started", frozen=True, kw_only=True):
    """A process runs the unit; its `pid` stays on the machine that gave it (never in the log)."""

    pid: int | None = None


class RunExited(UnitVerb, tag="run-exited", frozen=True, kw_only=True):
    code: int


class Assess(OnRecord, tag="assess", frozen=True, kw_only=True):
    state: str
    why: str | None = None


class Revoke(OnRecord, tag="revoke", frozen=True, kw_only=True):
    why: str | None = None


class Review(OnRecord, tag="review", frozen=True, kw_only=True):
    why: str | None = None


class ProjectAdd(Command, tag="project-add", frozen=True, kw_only=True):
    slug: str
    description: str | None = None


class ProjectArchive(Command, tag="project-archive", frozen=True, kw_only=True):
    slug: str
    why: str


class ProjectRestore(Command, tag="project-restore", frozen=True, kw_only=True):
    slug: str


class ImportDocket(Command, tag="import-docket", frozen=True, kw_only=True):
    """A Docket schema-2 ledger's records into the project: each line's number and its JSON
    (blank lines left out), read as Docket's reader reads them (`core/ledger/docket.py`)."""

    lines: tuple[tuple[int, Any], ...]


AnyCommand = (
    Add
    | Place
    | Confirm
    | Decline
    | Retract
    | Start
    | Block
    | Unblock
    | Done
    | Retire
    | Restore
    | Cover
    | Link
    | Report
    | RunStarted
    | RunExited
    | Assess
    | Revoke
    | Review
    | ProjectAdd
    | ProjectArchive
    | ProjectRestore
    | ImportDocket
)
PROJECT_COMMANDS = (ProjectAdd, ProjectArchive, ProjectRestore)


def log_of(command: AnyCommand) -> Log:
    """Which log a command writes to. A new record goes to the workspace log when it is
    recorded at workspace scope and neither supersedes nor demotes a record (those live in
    the project's log); a command on a record goes where the record is; projects are
    registered in the workspace log; an import goes to the project's log."""
    if isinstance(command, Add):
        alone = command.supersedes is None and not command.demote
        return "workspace" if command.scope == "workspace" and alone else "project"
    if isinstance(command, PROJECT_COMMANDS):
        return "workspace"
    return "project" if isinstance(command, ImportDocket) else "record"


SAID = "\x00"  # starts the name of a text (no id, prefix or alias holds a control character)


def said(text: str) -> str:
    """The name `named` gives the text of an add: the records saying it are read (the duplicate
    rule weighs the live ones)."""
    return SAID + text.strip()


def named(command: AnyCommand) -> tuple[str, ...] | None:
    """Every record reference (an id, an id prefix or an imported alias) `handle` may resolve
    for `command`, and an add's text (`said`: the records with that text), so a store can
    read those records alone; None when the command reads the
    whole state (an import). Anything else `handle` reads of a state — the live records a cap
    counts, placements waiting, the ledger's facts the named records' views read, projects —
    a hot slice holds or brings in with them (`adapters/store/hot.py: view`), reports included."""
    if isinstance(command, ImportDocket):
        return None
    found: list[str] = []
    if isinstance(command, OnRecord):
        found.append(command.record)
    if isinstance(command, Link):
        found.append(command.target)
    if isinstance(command, Add | Place):
        found += command.demote
    if isinstance(command, Add):
        found += [] if command.duplicate else [said(command.text)]
        found += [command.supersedes] if command.supersedes is not None else []
        found += [*command.depends_on, *command.answers]
        found += [m for item in command.supports for m in re.split(r"[,\s]+", item.strip()) if m]
    return tuple(dict.fromkeys(found))


def decode(body: bytes | str) -> AnyCommand:
    """A command from a JSON body (`{"command": "add", "text": …}`); Invalid when it is not one."""
    try:
        return msgspec.json.decode(body, type=AnyCommand)
    except msgspec.ValidationError as exc:
        raise Invalid(f"not a command: {exc}", code="invalid-value") from exc
    except msgspec.DecodeError as exc:
        raise Invalid(f"not JSON: {exc}", code="malformed") from exc
