"""The `self` executable's entry point (pyproject.toml [project.scripts]).

The commands a coding agent's hooks run on every tool call or session start (`self gate`,
`self agent context`, `self context` for an agent, `self --version`) are answered here,
through the application layer, without building the typer app of every command or importing
what they do not use: a hook pays the interpreter's start and little more. Anything else —
another command, `--help`, a flag given twice, a value typer would have to judge — goes to
the typer app (`cli.main.run`), which answers these commands the same way
(tests/e2e/test_fast_dispatch.py holds the two to the same output and exit code).
"""

from __future__ import annotations

import os
import sys
import warnings

from cli.options import OPTIONS, split_globals

TYPE_CHECKING = False  # typing itself is not imported: `self --version` would pay for it
if TYPE_CHECKING:
    from collections.abc import Callable

    from service.app.workspace import Workspace

    Command = Callable[[], None]
    Flags = dict[str, str | bool]


def run(argv: list[str] | None = None) -> None:
    given = list(sys.argv[1:] if argv is None else argv)
    command = _hot(split_globals(list(given)))
    if command is None:
        from cli.main import run as full

        return full(given)
    warnings.showwarning = _warn
    if command is not _version:
        _import_msgspec()
    try:
        command()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except Exception as exc:
        from cli.common import exit_for

        exit_for(exc)
    return None


def _hot(args: list[str]) -> Command | None:
    """The command this module answers for `args` (global options taken), else None."""
    if args == ["--version"]:
        return _version
    if args[:1] == ["gate"]:
        return _gate if _flags(args[1:], {"--json": False}) is not None else None
    if args[:2] == ["agent", "context"]:
        agent = _flags(args[2:], {"--service": True})
        return None if agent is None else lambda: _agent_context(_text(agent.get("--service")))
    if args[:1] == ["context"]:
        read = _flags(args[1:], {"--plain": False, "--budget": True, "--json": False})
        if read is None or not _plain_output(read):
            return None
        budget = _text(read.get("--budget"))
        if budget is not None and not _number(budget):
            return None
        return lambda: _context(None if budget is None else int(budget), bool(read.get("--json")))
    return None


def _import_msgspec() -> None:
    """Import msgspec without typing_extensions, which it reads only for `get_type_hints` and
    `Required`/`NotRequired`: on Python 3.11 and later those it would take are typing's own
    (msgspec always asks for the hints with their extras), and typing_extensions brings in
    inspect, ast and dis: about 60 M instructions, two thirds of what `python -c pass` runs. A
    stand-in holding typing's three is importable while msgspec loads; later imports get the
    real module (tests/unit/test_fast_imports.py: msgspec reads types the same)."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    import types
    import typing

    stand_in = types.ModuleType("typing_extensions")
    stand_in.__dict__.update(
        get_type_hints=typing.get_type_hints, Required=typing.Required, NotRequired=typing.NotRequired
    )
    sys.modules["typing_extensions"] = stand_in
    try:
        import msgspec  # noqa: F401
    finally:
        del sys.modules["typing_extensions"]


def _flags(args: list[str], known: dict[str, bool]) -> Flags | None:
    """`args` as options `known` names (True: takes a value), each at most once; None for
    anything else (typer then parses, and says what is wrong)."""
    found: Flags = {}
    rest = iter(args)
    for arg in rest:
        name, equals, value = arg.partition("=")
        if name not in known or name in found or (equals and not known[name]):
            return None
        if not known[name]:
            found[name] = True
            continue
        if not equals:
            value = next(rest, "-")
            if value.startswith("-"):
                return None
        found[name] = value
    return found


def _number(value: str) -> bool:
    """Whether click reads `value` as the same int (1 to 9 digits); else typer judges it."""
    return len(value) <= 9 and value.isascii() and value.isdigit()


def _text(value: str | bool | None) -> str | None:
    return value if isinstance(value, str) else None


def _plain_output(read: Flags) -> bool:
    """Whether `self context` prints JSON or the agent render, not a terminal's (cli/reads.py)."""
    return bool(read.get("--json") or read.get("--plain")) or not sys.stdout.isatty()


def _version() -> None:
    from service import __version__

    sys.stdout.write(f"self {__version__}\n")
    sys.stdout.flush()


def _gate() -> None:
    from service.app import gate

    _emit_json(gate.rule(sys.stdin.read(), _workspace))


def _agent_context(service: str | None) -> None:
    from service.app import sessions
    from service.app.locate import project_slug

    _echo(sessions.session_context(service, project_slug(OPTIONS.project), _workspace))


def _context(budget: int | None, as_json: bool) -> None:
    from service.app import queries, texts

    read = queries.context(_workspace(), queries.budget(budget))
    if as_json:
        return _emit_json(read.fitted())
    if shown := texts.context(read, agent=True):
        _echo(shown)
    return None


def _workspace() -> Workspace:
    from service.app import locate

    return locate(OPTIONS.workspace, OPTIONS.project)


def _echo(text: str) -> None:
    """A line as cli/common.py `echo` prints it: control characters as \\uXXXX."""
    from service.app.texts import escape

    sys.stdout.write(escape(text.rstrip("\n")) + "\n")
    sys.stdout.flush()


def _emit_json(data: object) -> None:
    import msgspec

    sys.stdout.buffer.write(msgspec.json.encode(data) + b"\n")
    sys.stdout.flush()


def _warn(message: Warning | str, category: type[Warning], *_: object, **__: object) -> None:
    """A warning the store gives is one line on stderr, no source (as cli/main.py shows it)."""
    sys.stderr.write(f"self: warning: {message}\n")
    sys.stderr.flush()
