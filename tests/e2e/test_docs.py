"""The docs are true: the README's Quick start and the guides' walkthroughs run as written, and
the Commands table of docs/commands.md names every command."""

from __future__ import annotations

import itertools
import re
import shlex
import subprocess
from collections.abc import Iterator
from pathlib import Path

from tests.support.selfrun import REPO, base_env

README = REPO / "README.md"
CONCEPTS = REPO / "docs" / "concepts.md"
COMMANDS = REPO / "docs" / "commands.md"
TEAM_SERVICE = REPO / "docs" / "team-service.md"
MARK = "@@@ quick-start line "


def section(path: Path, title: str) -> str:
    """The part of the Markdown file `path` under the heading `title` (any level), up to the
    next heading of that level or above; a `#` line inside a fenced block is not a heading."""
    found, level, fenced = False, 0, False
    lines: list[str] = []
    for line in path.read_text("utf-8").splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.match(r"(#{1,6}) (.*)\n?$", line)
        if heading and found and len(heading.group(1)) <= level:
            break
        if heading and not found and heading.group(2).strip() == title:
            found, level = True, len(heading.group(1))
        if found:
            lines.append(line)
    assert found, f"{path.relative_to(REPO)} has no section {title!r}"
    return "".join(lines)


def sh_lines(path: Path, title: str) -> list[str]:
    """The non-blank lines of the first ```sh block of a section."""
    block = re.search(r"```sh\n(.*?)```", section(path, title), re.S)
    assert block, f"{path.relative_to(REPO)}'s {title} has no ```sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


# Every ```sh block of the README and the guides, by the heading it sits under: run as
# written by a test here or in test_sync_docs.py, or not run, saying why.
RUN = {
    ("README.md", "Quick start"),
    ("docs/concepts.md", "Decisions and why"),
    ("docs/team-service.md", "A team's setup"),
    ("docs/sync.md", "Sync with your team"),
    ("docs/operate.md", "Backup"),  # these three by tests/e2e/test_operate_docs.py
    ("docs/operate.md", "Restore"),
    ("docs/operate.md", "Upgrade"),
    ("docs/operate.md", "Install"),  # tests/e2e/test_install.py
    ("docs/replicas.md", "Two instances on one machine"),  # tests/e2e/test_replicas_docs.py
}
NOT_RUN = {
    ("README.md", "Install"): "installs the package and runs the whole suite",
    ("README.md", "Start the service"): "serves until stopped; A team's setup runs the same commands",
    ("docs/deploy.md", "Deploy"): "needs a Docker engine; tests/e2e/test_container.py builds the image",
    ("docs/deploy.md", "With compose"): "needs a Docker engine; test_container.py runs it as compose does",
    ("docs/deploy.md", "On Kubernetes"): "needs a cluster; test_deploy_manifests.py checks the manifests",
    ("docs/operate.md", "Backup with compose"): "needs a Docker engine; Backup runs the same command",
    ("docs/operate.md", "Backup on Kubernetes"): "needs a cluster; test_backup_jobs.py checks the manifests",
    ("docs/operate.md", "Upgrade with compose"): "needs a Docker engine; Upgrade runs the same command",
    ("docs/operate.md", "Upgrade on Kubernetes"): "needs a cluster; test_backup_jobs.py runs its job",
    ("docs/operate.md", "Roll back with compose"): "needs Docker; test_backup_jobs.py runs its script",
    ("docs/operate.md", "Roll back on Kubernetes"): "needs a cluster; test_backup_jobs.py runs its job",
    ("docs/operate.md", "Remaking the locks"): "resolves on the package index; test_locks.py checks them",
    ("docs/operate.md", "The image"): "needs a Docker engine; test_container.py builds it from the lock",
    ("docs/operate.md", "Compose"): "installs from Docker's apt repository; test_container.py runs it",
    ("docs/operate.md", "With compose"): "needs Compose v2; test_container.py runs the tls profile",
    ("docs/operate.md", "On Kubernetes"): "needs a cluster; test_deploy_tls.py checks the Ingress",
    ("docs/operate.md", "Logs"): "serves until stopped; test_serve_front.py runs self serve with --log-level",
    ("docs/replicas.md", "With compose"): "needs Compose v2; test_deploy_replicas.py checks its files",
    ("docs/replicas.md", "On Kubernetes"): "needs a cluster; test_deploy_manifests.py checks the overlay",
}


def sh_blocks() -> set[tuple[str, str]]:
    """(file, the heading above it) of every ```sh block in README.md and docs/*.md."""
    found = set()
    for path in [README, *sorted((REPO / "docs").glob("*.md"))]:
        heading, fenced = "", False
        for line in path.read_text("utf-8").splitlines():
            if line.startswith("```"):
                if not fenced and line.strip() == "```sh":
                    found.add((str(path.relative_to(REPO)), heading))
                fenced = not fenced
            elif not fenced and (title := re.match(r"#{1,6} (.*)$", line)):
                heading = title.group(1).strip()
    return found


def test_every_sh_block_is_run_or_says_why_not() -> None:
    blocks = sh_blocks()
    assert blocks >= RUN, f"walkthroughs the tests run are gone: {sorted(RUN - blocks)}"
    unknown = blocks - RUN - set(NOT_RUN)
    assert not unknown, f"```sh blocks no test runs (run them, or add them to NOT_RUN): {sorted(unknown)}"


def quick_start_lines() -> list[str]:
    return sh_lines(README, "Quick start")


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
    lines = sh_lines(CONCEPTS, "Decisions and why")
    outputs = run_lines(tmp_path, lines)
    status = next(i for i, line in enumerate(lines) if line.startswith("self status"))
    assert "review owed: 1" in outputs[status] and "revise (now" in outputs[status], outputs[status]
    context = outputs[max(i for i, line in enumerate(lines) if line.startswith("self context"))]
    for mark in ("(disputed)", "(blocked on ", "(unresolved)"):
        assert mark in context, f"`self context --plain` lacks {mark!r}:\n{context}"


def test_the_gate_hook_snippet_runs(tmp_path: Path) -> None:
    import json

    text = section(CONCEPTS, "The action gate")
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
    for line in section(COMMANDS, "Commands").splitlines():
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


def test_every_command_is_in_the_commands_table() -> None:
    commands = [path for path, _ in cli_commands()]
    assert len(commands) > 40, f"the CLI walk found only {commands}"
    missing = sorted(undocumented())
    assert not missing, f"commands missing from docs/commands.md's table: {', '.join(missing)}"


def test_a_teams_setup_runs_line_by_line(tmp_path: Path) -> None:
    """The service, the admin commands, a CLI writing into the hosted store, a second CLI
    syncing with it, a writer over HTTP and an agent reading context over HTTP: the same
    context the CLI prints, holding what each of them wrote."""
    from tests.support.servers import free_port

    port = str(free_port())
    lines = [line.replace("8765", port) for line in sh_lines(TEAM_SERVICE, "A team's setup")]
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
    assert "render on the server" in copied, "a reader's clone of the endpoint holds Ben's synced record"
    clone_config = (tmp_path / "agent-copy" / ".git" / "config").read_text()
    assert "shb_" not in clone_config, "a token stayed in the clone"
    assert served == printed, "context over HTTP is the CLI's, byte for byte"
