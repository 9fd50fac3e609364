"""`self agent block`: the managed block in AGENTS.md / CLAUDE.md written and refreshed on real
files, idempotent, not a byte outside it changed, following the conventions through add,
supersede and retract; a Superself block taken over in place; the machine-level block under
HOME; a block a later version wrote rewritten with a warning; the session hook refreshing it."""

from __future__ import annotations

import re
from pathlib import Path

from service import __version__
from tests.support.selfrun import Store, describe, run_self

BEFORE = "# Our project\n\nHand-written notes.\n"
AFTER = "\n## Later\n\nMore of ours.\n"


def block_of(text: str) -> str:
    found = re.search(r"<!-- selfhub:begin v[^ ]+ -->.*?<!-- selfhub:end -->", text, re.S)
    assert found, text
    return found[0]


def run_block(store: Store, folder: Path, *args: str) -> str:
    done = store.run("agent", "block", "--dir", str(folder), *args)
    assert done.returncode == 0, describe(done)
    return done.stderr


def test_the_block_is_idempotent_and_leaves_every_other_byte(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "checkout"
    folder.mkdir()
    (folder / "AGENTS.md").write_text(BEFORE)
    (folder / "CLAUDE.md").write_text("x" * 3)  # no newline at its end
    run_block(store, folder)
    agents = (folder / "AGENTS.md").read_text()
    assert agents.startswith(BEFORE) and f"<!-- selfhub:begin v{__version__} -->" in agents
    assert "`context`" in agents and "`record`" in agents and "self context" in agents
    once = {n: (folder / n).read_bytes() for n in ("AGENTS.md", "CLAUDE.md")}
    run_block(store, folder)
    assert {n: (folder / n).read_bytes() for n in once} == once, "a second run changed a byte"
    # text added around the block by hand stays as it is through a refresh
    (folder / "AGENTS.md").write_text("Top line.\n" + agents + AFTER)
    store.ok("convention", "add", "tabs are never used")
    run_block(store, folder)
    now = (folder / "AGENTS.md").read_text()
    assert now.startswith("Top line.\n" + BEFORE) and now.endswith(AFTER)
    assert "- tabs are never used" in block_of(now)


def test_the_conventions_follow_add_supersede_and_retract(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "checkout"
    folder.mkdir()
    first = store.add("convention", "add", "commit messages say why")
    store.add("convention", "add", "tests touch real files")
    run_block(store, folder)
    block = block_of((folder / "AGENTS.md").read_text())
    assert "- commit messages say why" in block and "- tests touch real files" in block
    store.ok("convention", "add", "commit messages say what and why", "--supersedes", first)
    run_block(store, folder)
    block = block_of((folder / "AGENTS.md").read_text())
    assert "- commit messages say what and why" in block and "- commit messages say why\n" not in block
    listed = store.json("convention", "list")
    gone = next(r["id"] for r in listed if r["text"] == "tests touch real files")
    store.ok("convention", "retract", gone, "--why", "no longer holds")
    run_block(store, folder)
    block = block_of((folder / "AGENTS.md").read_text())
    assert "tests touch real files" not in block and "- commit messages say what and why" in block


def test_a_superself_block_is_taken_over_in_place(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "checkout"
    folder.mkdir()
    old = "<!-- superself:begin v0.5.1 -->\n## Project state (superself)\n- stale body\n"
    old += "<!-- superself:end -->"
    (folder / "CLAUDE.md").write_text(BEFORE + old + AFTER)
    unstamped = "<!-- superself:begin -->\nolder body\n<!-- superself:end -->\n"
    (folder / "AGENTS.md").write_text(BEFORE + unstamped)
    run_block(store, folder)
    claude = (folder / "CLAUDE.md").read_text()
    assert claude.startswith(BEFORE) and claude.endswith(AFTER)
    assert "superself:begin" not in claude and "stale body" not in claude
    assert claude.count("selfhub:begin") == 1
    agents = (folder / "AGENTS.md").read_text()
    assert agents.startswith(BEFORE) and agents.count("selfhub:begin") == 1 and "older body" not in agents


def test_the_machine_block_goes_under_home(store: Store, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    (home / ".claude" / "CLAUDE.md").write_text(
        "mine\n\n<!-- superself:machine:begin v0.5.1 -->\nold\n<!-- superself:machine:end -->\ntail\n"
    )
    env = {"HOME": str(home)}
    done = store.run("agent", "block", "--machine", env_extra=env)
    assert done.returncode == 0, describe(done)
    claude = (home / ".claude" / "CLAUDE.md").read_text()
    assert claude.startswith("mine\n\n<!-- selfhub:machine:begin v") and claude.endswith("-->\ntail\n")
    assert "superself" not in claude and "self context" in claude
    codex = (home / ".codex" / "AGENTS.md").read_text()
    assert codex.startswith("<!-- selfhub:machine:begin") and codex.endswith("<!-- selfhub:machine:end -->\n")
    assert not (home / ".gemini").exists(), "an agent this machine lacks gets no folder"
    again = store.run("agent", "block", "--machine", env_extra=env)
    assert again.returncode == 0 and (home / ".claude" / "CLAUDE.md").read_text() == claude


def test_a_block_a_later_version_wrote_is_rewritten_with_a_warning(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "checkout"
    folder.mkdir()
    run_block(store, folder)
    path = folder / "AGENTS.md"
    path.write_text(path.read_text().replace(f"v{__version__} -->", "v99.0.0 -->"))
    said = run_block(store, folder)
    assert "v99.0.0" in said and "newer" in said, said
    assert f"<!-- selfhub:begin v{__version__} -->" in path.read_text()
    assert "newer" not in run_block(store, folder)


def test_the_session_hook_refreshes_the_block(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "checkout"
    folder.mkdir()
    run_block(store, folder)
    (folder / "CLAUDE.md").write_text(BEFORE)
    store.ok("convention", "add", "the hook brings this in")
    ran = run_self(("agent", "context"), store.env(), cwd=folder)
    assert ran.returncode == 0, describe(ran)
    assert "- the hook brings this in" in block_of((folder / "AGENTS.md").read_text())
    assert (folder / "CLAUDE.md").read_text() == BEFORE, "a file without a block gains none from the hook"


def test_an_unterminated_block_is_refused_and_left(store: Store, tmp_path: Path) -> None:
    folder = tmp_path / "checkout"
    folder.mkdir()
    (folder / "AGENTS.md").write_text("<!-- selfhub:begin v0.1.0 -->\nno end\n")
    done = store.run("agent", "block", "--dir", str(folder))
    assert done.returncode == 1 and "end marker" in done.stderr
    assert (folder / "AGENTS.md").read_text() == "<!-- selfhub:begin v0.1.0 -->\nno end\n"
