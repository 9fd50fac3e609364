"""The README is true: its Quick start runs as written, its Commands table names every command."""

from __future__ import annotations

import itertools
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.support.selfrun import REPO, base_env

README = REPO / "README.md"
MARK = "@@@ quick-start line "

# Commands the CLI has that the README's Commands table does not name yet. The table's
# `self work …` row lists add/start/…/exited but not the `confirm` and `retract` every
# alias verb (work included) carries. README.md is outside the e2e owner's files; the
# strict xfail below turns into a failure the day the table names them.


def section(title: str) -> str:
    text = README.read_text("utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def quick_start_lines() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", section("Quick start"), re.S)
    assert block, "README.md's Quick start has no ```sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_runs_line_by_line(tmp_path: Path) -> None:
    lines = quick_start_lines()
    goal_lines = [shlex.split(line) for line in lines if line.startswith("self goal ")]
    assert goal_lines, "the Quick start records no goal"
    goal = goal_lines[0][2]
    context_at = max(i for i, line in enumerate(lines) if line.startswith("self context --plain"))

    outputs = run_lines(tmp_path, lines)
    assert goal in outputs[context_at], (
        f"`self context --plain` does not show the goal {goal!r}:\n{outputs[context_at]}"
    )
    assert (tmp_path / "team-state" / "workspace.json").is_file(), "no store was created"


def sh_lines(title: str) -> list[str]:
    block = re.search(r"```sh\n(.*?)```", section(title), re.S)
    assert block, f"README.md's {title} has no ```sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def run_lines(tmp_path: Path, lines: list[str]) -> dict[int, str]:
    """Run the lines as one bash -e script; each line's output, by line number."""
    script = tmp_path / "block.sh"
    body = [f"printf '\\n{MARK}%d\\n' {i}\n{line}" for i, line in enumerate(lines)]
    script.write_text("\n".join(body) + "\n", "utf-8")
    proc = subprocess.run(
        ["bash", "-e", str(script)],
        cwd=tmp_path,
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    outputs = dict.fromkeys(range(len(lines)), "")
    for chunk in proc.stdout.split(f"\n{MARK}")[1:]:
        number, _, out = chunk.partition("\n")
        outputs[int(number)] = out
    reached = max((i for i in outputs if f"{MARK}{i}\n" in proc.stdout), default=-1)
    assert proc.returncode == 0, (
        f"line {reached + 1} failed (exit {proc.returncode}): {lines[reached]}\n"
        f"--- its output\n{outputs[reached]}--- stderr\n{proc.stderr}"
    )
    assert reached == len(lines) - 1, f"the script stopped after line {reached + 1}"
    return outputs


def test_decisions_and_why_runs_line_by_line(tmp_path: Path) -> None:
    lines = sh_lines("Decisions and why")
    outputs = run_lines(tmp_path, lines)
    status = next(i for i, line in enumerate(lines) if line.startswith("self status"))
    assert "review owed: 1" in outputs[status] and "revise (now" in outputs[status], outputs[status]
    context = outputs[max(i for i, line in enumerate(lines) if line.startswith("self context"))]
    for mark in ("(disputed)", "(blocked on ", "(unresolved)"):
        assert mark in context, f"`self context --plain` lacks {mark!r}:\n{context}"


def test_the_gate_hook_snippet_runs(tmp_path: Path) -> None:
    import json

    text = section("Decisions and why")
    snippet = json.loads(re.search(r"```json\n(.*?)```", text, re.S).group(1))  # type: ignore[union-attr]
    command = snippet["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    hook = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "rm -rf data"}}
    proc = subprocess.run(
        shlex.split(command),
        input=json.dumps(hook),
        env=base_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["decision"] == "ask"


# --- the Commands table -------------------------------------------------------------------

WORD = re.compile(r"^[a-z][a-z-]*(/[a-z][a-z-]*)*$")


def documented() -> set[str]:
    """Every command path the Commands table names.

    A row `self a/b c/d ARGS` names `self a c`, `self a d`, `self b c`, `self b d`; single
    backticked words in its description (`confirm`, `add` is implied) name subcommands of them.
    """
    names: set[str] = set()
    for line in section("Commands").splitlines():
        if not line.startswith("| `self"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        usage = re.match(r"`([^`]*)`", cells[0])
        assert usage, line
        words = list(itertools.takewhile(WORD.match, usage.group(1).split()[1:]))
        paths = {" ".join(("self", *p)) for p in itertools.product(*(w.split("/") for w in words))}
        subs = re.findall(r"`([a-z][a-z-]*)`", cells[1] if len(cells) > 1 else "")
        names |= paths | {f"{p} {s}" for p in paths for s in subs}
    return names


def cli_commands() -> Iterator[tuple[str, bool]]:
    """(`self …` path, is a group) of every command and subcommand of the CLI."""
    import typer

    from cli.main import app

    def walk(command: object, path: tuple[str, ...]) -> Iterator[tuple[str, bool]]:
        subs = getattr(command, "commands", None) or {}
        if path:
            yield " ".join(("self", *path)), bool(subs)
        for name, sub in sorted(subs.items()):
            if not getattr(sub, "hidden", False):
                yield from walk(sub, (*path, name))

    yield from walk(typer.main.get_command(app), ())


def undocumented() -> list[str]:
    table = documented()
    assert {"self init", "self state add", "self goal add", "self import superself"} <= table, (
        f"the Commands table parser found only: {sorted(table)}"
    )
    missing = []
    for path, group in cli_commands():
        if group:
            if not any(name == path or name.startswith(f"{path} ") for name in table):
                missing.append(path)
        elif path not in table:
            missing.append(path)
    return missing


def test_every_command_is_in_the_readme_table() -> None:
    commands = [path for path, _ in cli_commands()]
    assert len(commands) > 40, f"the CLI walk found only {commands}"
    missing = sorted(undocumented())
    assert not missing, f"commands missing from README.md's Commands table: {', '.join(missing)}"


def test_a_teams_setup_runs_line_by_line(tmp_path: Path) -> None:
    """The service, the admin commands, a CLI writing into the hosted store, a second CLI
    syncing with it, a writer over HTTP and an agent reading context over HTTP: the same
    context the CLI prints, holding what each of them wrote."""
    from tests.support.servers import free_port

    port = str(free_port())
    lines = [line.replace("8765", port) for line in sh_lines("A team's setup")]
    outputs = run_lines(tmp_path, lines)
    served = outputs[next(i for i, line in enumerate(lines) if "context?format=plain" in line)]
    printed = outputs[max(i for i, line in enumerate(lines) if "self context --plain" in line)]
    for text in ("ship the first page", "render on the server"):
        assert text in served, served
    ben = subprocess.run(
        ["self", "state", "list", "--all", "--json"],
        cwd=tmp_path,
        env=base_env() | {"SELF_WORKSPACE": str(tmp_path / "ben-state"), "SELF_PROJECT": "web"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "try a static export" in ben, "the event posted over HTTP reached the second CLI"
    copied = (tmp_path / "agent-copy" / "projects" / "web" / "log" / "000000.jsonl").read_text("utf-8")
    assert "render on the server" in copied, "a reader's git clone of the endpoint holds Ben's synced record"
    assert served == printed, "context over HTTP is the CLI's, byte for byte"
