"""docs/cli.md is what `cli/reference.py` prints from the commands now, and names every command."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from cli import reference

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "cli.md"


def test_the_reference_is_current() -> None:
    assert DOC.is_file(), f"docs/cli.md is missing: run `{reference.REGENERATE}`"
    assert DOC.read_text("utf-8") == reference.render(), (
        f"docs/cli.md differs from what the commands say: run `{reference.REGENERATE}`"
    )


def test_every_command_has_a_section() -> None:
    headings = set(re.findall(r"^## (self(?: [a-z][a-z-]*)*)$", DOC.read_text("utf-8"), re.M))
    paths = [" ".join(("self", *path)) for path, _ in reference.commands()]
    assert len(paths) > 40, f"the walk found only {paths}"
    assert {"self init", "self work parallel", "self admin token create", "self serve"} <= set(paths)
    missing = sorted(set(paths) - headings)
    assert not missing, f"commands without a section in docs/cli.md: {', '.join(missing)}"


def test_the_render_is_the_same_in_any_terminal() -> None:
    """No terminal width, colour or store changes a byte: a narrow, colourless run with a
    workspace set prints what this process renders."""
    env = {"COLUMNS": "40", "TERM": "dumb", "NO_COLOR": "1", "SELF_WORKSPACE": str(REPO / "nowhere")}
    printed = subprocess.run(
        [sys.executable, "-m", "cli.reference"],
        cwd=REPO,
        env=env | {"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed == reference.render()


def test_check_names_the_command_to_regenerate(tmp_path: Path) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text("# CLI reference\n", "utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "cli.reference", "--check", str(stale)],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert reference.REGENERATE in proc.stderr
    assert reference.main(["--check", str(DOC)]) == 0
