"""The tools a coding agent calls over the Model Context Protocol: one table, served by `self mcp`
on the local store (`cli/mcp.py`) and by the service's `/mcp` (`service/server/mcp.py`).

Each tool is a read (`queries`, the gate) or a command (`execute`) of this layer, answered as the
CLI prints it: `context` is `self context --plain`, `search` is `self search`, `show` is
`self state show --history`, `gate` is `self gate`, a write the lines `self …` prints for the
events it appended. A tool's arguments are a struct (unknown or mistyped arguments are refused,
naming the argument); its JSON Schema is made from that struct, so the two never disagree.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Literal

import msgspec

from service.core.errors import Invalid
from service.core.events.events import ClaimState

if TYPE_CHECKING:
    from service.app.workspace import Workspace
    from service.core.commands.requests import AnyCommand
    from service.core.commands.team import Action
    from service.core.events.events import Event

KINDS = {
    "goal": "goal",
    "objective": "objective",
    "milestone": "milestone",
    "convention": "convention",
    "decision": "decide",
    "idea": "idea",
    "claim": "claim",
    "question": "question",
    "work": "work",
}
Kind = Literal[
    "goal", "objective", "milestone", "convention", "decision", "idea", "claim", "question", "work"
]
WorkAction = Literal["start", "block", "unblock", "report", "done"]


class Args(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, omit_defaults=True):
    """What every tool's arguments share: none may be unknown."""


class ContextArgs(Args, frozen=True, kw_only=True):
    project: str
    budget: int | None = None


class SearchArgs(Args, frozen=True, kw_only=True):
    query: str
    project: str | None = None
    all_: bool = msgspec.field(default=False, name="all")


class ShowArgs(Args, frozen=True, kw_only=True):
    id: str


class RecordArgs(Args, frozen=True, kw_only=True):
    project: str
    kind: Kind
    text: str
    why: str | None = None
    supports: list[str] = msgspec.field(default_factory=list)
    depends_on: list[str] = msgspec.field(default_factory=list)
    answers: list[str] = msgspec.field(default_factory=list)
    supersedes: str | None = None
    supersede_reason: Literal["restate", "revise", "reverse"] | None = None
    proposed: bool = False
    duplicate: bool = False


class WorkArgs(Args, frozen=True, kw_only=True):
    id: str
    action: WorkAction
    text: str | None = None
    on: str | None = None
    why: str | None = None
    commit: str | None = None
    artifact: str | None = None


class ReviewArgs(Args, frozen=True, kw_only=True):
    id: str
    why: str | None = None
    state: ClaimState | None = None


class GateArgs(Args, frozen=True, kw_only=True):
    tool_name: str
    tool_input: dict[str, Any]
    project: str | None = None


class Tool(msgspec.Struct, frozen=True):
    """One tool: its name, what it does, its arguments, and the role action it takes."""

    name: str
    description: str
    args: type[Args]
    action: Action
    notes: dict[str, str] = msgspec.field(default_factory=dict)  # an argument's description

    def schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments, made from its struct."""
        info = msgspec.inspect.type_info(self.args)
        assert isinstance(info, msgspec.inspect.StructType)
        properties = {f.encode_name: _typed(f.type) | _noted(self.notes, f.encode_name) for f in info.fields}
        required = [f.encode_name for f in info.fields if f.required]
        return {"type": "object", "properties": properties, "required": required}


def _noted(notes: Mapping[str, str], name: str) -> dict[str, str]:
    return {"description": notes[name]} if name in notes else {}


def _typed(kind: msgspec.inspect.Type) -> dict[str, Any]:
    """A field's type as compact JSON Schema (None leaves an optional field's type as it is)."""
    from msgspec import inspect as mi

    if isinstance(kind, mi.UnionType):
        return _typed(next(t for t in kind.types if not isinstance(t, mi.NoneType)))
    if isinstance(kind, mi.LiteralType):
        return {"enum": list(kind.values)}
    if isinstance(kind, mi.ListType):
        return {"type": "array", "items": _typed(kind.item_type)}
    if isinstance(kind, mi.DictType):
        return {"type": "object"}
    names = {mi.StrType: "string", mi.IntType: "integer", mi.BoolType: "boolean"}
    return {"type": names[type(kind)]}


SHORT = "Rows carry short ids; show(id) gives a record whole."
TOOLS: tuple[Tool, ...] = (
    Tool(
        "context",
        "The project's bounded context (goals, conventions, decisions, open work), as the "
        "plain agent render. Read it first. " + SHORT,
        ContextArgs,
        "read",
        {"budget": "token budget (100-1000000; default the workspace's)"},
    ),
    Tool(
        "search",
        "Live records context leaves out, across projects ranked by bm25. " + SHORT,
        SearchArgs,
        "read",
        {"project": "ranked first", "all": "also records context shows"},
    ),
    Tool(
        "show",
        "One record by id or prefix: its fields, derived ledger views and history.",
        ShowArgs,
        "read",
    ),
    Tool(
        "record",
        "Record a goal, decision, claim, work unit... Ledger links (claim, decision, question): "
        "supports, depends_on, answers.",
        RecordArgs,
        "command",
        {
            "supports": "grounds: each 'ID[,ID]' is one AND set",
            "supersedes": "id of the live record this replaces",
            "proposed": "a proposal waiting on a person",
            "duplicate": "add it though a live record has its kind and text",
        },
    ),
    Tool(
        "work",
        "Move a work unit: start, block (on, why), unblock, report (text, commit, artifact), "
        "done (evidence: text, commit or artifact).",
        WorkArgs,
        "command",
    ),
    Tool(
        "review",
        "Acknowledge the review a ledger record owes; with state, assess a claim instead.",
        ReviewArgs,
        "command",
    ),
    Tool(
        "gate",
        "The action gate's ruling (allow, deny, ask) on a planned tool call.",
        GateArgs,
        "read",
    ),
)
BY_NAME = {tool.name: tool for tool in TOOLS}


class Call(msgspec.Struct, frozen=True):
    """A tool call with its arguments checked."""

    tool: Tool
    args: Args

    @property
    def project(self) -> str | None:
        """The project the call names (None: the one its record is in, or the default)."""
        project = getattr(self.args, "project", None)
        return project if isinstance(project, str) else None


def parse(name: str, arguments: Mapping[str, Any] | None) -> Call:
    """The call of tool `name`; Invalid naming the tool or the argument that is wrong."""
    tool = BY_NAME.get(name)
    if tool is None:
        raise Invalid(f"no tool {name!r}: the tools are {', '.join(BY_NAME)}", field="tool")
    try:
        args = msgspec.convert(dict(arguments or {}), tool.args)
    except msgspec.ValidationError as exc:
        raise Invalid(f"{name}: {exc}; see the tool's input schema", field="arguments") from None
    return Call(tool, args)


def answer(ws: Workspace, call: Call, local: bool = True) -> str:
    """The tool's answer on `ws` (a write runs `execute` on it); `local`: the workspace is
    this machine's store, so the gate may read the checkout the call runs in."""
    args = call.args
    if isinstance(args, (ShowArgs, WorkArgs, ReviewArgs)):
        _at_record(ws, args.id)
    if isinstance(args, GateArgs):
        return _gate(ws, args, local)
    read = _READS.get(type(args))
    if read is not None:
        return _plain(read(ws, args))
    from service.app import execute

    return _plain(written(ws, execute(ws, command(ws, args)), short=False))


def _context(ws: Workspace, args: Any) -> str:
    from service.app import queries, texts

    return texts.context(queries.context(ws, queries.budget(args.budget)), agent=True)


def _search(ws: Workspace, args: Any) -> str:
    from service.app import queries, texts

    hits = queries.search(ws, args.query, args.all_, None)
    return texts.matches(hits.lines, hits.hidden, "all: true")


def _show(ws: Workspace, args: Any) -> str:
    from service.app import queries

    return queries.record(ws, args.id, True, None).text


_READS: dict[type[Args], Callable[[Workspace, Any], str]] = {
    ContextArgs: _context,
    SearchArgs: _search,
    ShowArgs: _show,
}


def command(ws: Workspace, args: Args) -> AnyCommand:
    """The command value a write tool's arguments make (as the CLI's flags make it)."""
    from service.core.commands import requests as rq

    if isinstance(args, RecordArgs):
        return rq.Add(
            text=args.text,
            preset=KINDS[args.kind],
            why=args.why,
            supports=tuple(args.supports),
            depends_on=tuple(args.depends_on),
            answers=tuple(args.answers),
            supersedes=args.supersedes,
            supersede_reason=args.supersede_reason,
            proposed=args.proposed,
            duplicate=args.duplicate,
        )
    if isinstance(args, ReviewArgs):
        if args.state is not None:
            return rq.Assess(record=args.id, state=args.state, why=args.why)
        return rq.Review(record=args.id, why=args.why)
    assert isinstance(args, WorkArgs)
    return _work(ws, args)


def _work(ws: Workspace, args: WorkArgs) -> AnyCommand:
    from service.core.commands import requests as rq

    record = args.id
    if args.action == "start":
        return rq.Start(record=record, unit=True, head=ws.checkout_head())
    if args.action == "block":
        return rq.Block(record=record, unit=True, on=args.on, why=args.why)
    if args.action == "unblock":
        return rq.Unblock(record=record, unit=True)
    if args.action == "report":
        if not args.text:
            raise Invalid("work report: give the report's text", field="text")
        return rq.Report(record=record, text=args.text, commit=args.commit, artifact=args.artifact)
    return rq.Done(
        record=record,
        unit=True,
        report=args.text,
        commit=args.commit,
        artifact=args.artifact,
        why=args.why,
        head=ws.checkout_head(),
    )


def written(ws: Workspace, events: list[Event], short: bool = True) -> str:
    """The lines a write prints (`self …` and the write tools): each event's type and what it is
    about, a record by its short id (unique in its log as context shows it; --json has the
    whole id), or by its whole id when not `short` (a write tool's: an agent keeps the id for
    later calls, when later records may share a short one's characters)."""
    from service.app.queries import event_row

    lines = []
    for event, row in zip(events, (event_row(e) for e in events), strict=True):
        payload = row.get("payload")
        subject = ""
        if isinstance(payload, dict):
            subject = str(payload.get("entity") or payload.get("work") or payload.get("slug") or "")
        lines.append(f"{row['type']} {_short(ws, event.project, subject) if short else subject}".rstrip())
    return "\n".join(lines)


WRITTEN_MINIMUM = 10  # an id's first 10 characters are its millisecond: one made in a later one differs


def _short(ws: Workspace, log: str, subject: str) -> str:
    """`subject`'s short id when it is a record's id (else `subject`, a slug): unique among the
    records of `log`, where the event was written (its `project`), and of every log an id given
    here is looked up in (this project's, then the workspace's), and at least its millisecond
    long, so the next records written (agents write several a second) leave it unique."""
    from itertools import chain

    from service.core.events import ids
    from service.core.events.events import WORKSPACE_LOG
    from service.core.projections.render import LazyShorts

    if not ids.is_id(subject):
        return subject
    hots = [ws.hot(each) for each in dict.fromkeys([log, ws.project or WORKSPACE_LOG, WORKSPACE_LOG])]
    universe = chain.from_iterable(hot.state.entities for hot in hots)

    def near(wanted: Collection[str]) -> list[str]:
        return [i for hot in hots for i in hot.near(wanted)]

    return LazyShorts([subject], universe, near, WRITTEN_MINIMUM)[subject]


def _gate(ws: Workspace, args: GateArgs, local: bool) -> str:
    """`self gate`'s answer. On the service the checkout facts are not this machine's to read:
    none is given, and a fact not given counts against the call."""
    from service.app import gate

    if local:
        text = json.dumps({"tool_name": args.tool_name, "tool_input": args.tool_input})
        return msgspec.json.encode(gate.rule(text, lambda: ws)).decode()
    from service.core.gates import action

    state = ws.state(ws.require_project()) if ws.project else None
    return msgspec.json.encode(gate.answer(action.rule(args.tool_name, args.tool_input, state))).decode()


def _at_record(ws: Workspace, prefix: str) -> None:
    """Select the project whose log holds the record `prefix` names (the workspace log's
    records are found from any project)."""
    from service.core.events.events import WORKSPACE_LOG

    if not prefix.strip():
        raise Invalid("give a record's id or a prefix of it", field="id")
    if ws.project and ws.project in ws.store.logs() and ws.holds(ws.project, prefix):
        return
    holding = [log for log in ws.store.logs() if log != WORKSPACE_LOG and ws.holds(log, prefix)]
    if len(holding) > 1:
        raise Invalid(
            f"{prefix!r} names records in projects {', '.join(holding)}: give more of the id", field="id"
        )
    if holding:
        ws.project = holding[0]


def _plain(text: str) -> str:
    """As the CLI prints it: control characters as \\uXXXX, no trailing newline."""
    from service.app.texts import escape

    return escape(text.rstrip("\n"))


def listing() -> list[dict[str, Any]]:
    """`tools/list`'s tools: name, description and input schema each."""
    return [{"name": t.name, "description": t.description, "inputSchema": t.schema()} for t in TOOLS]
