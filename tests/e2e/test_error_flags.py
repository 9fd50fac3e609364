"""The model names fields, never flags; the CLI still names the flag to pass and the command
to run next, in one line, with the exit code the error code's row gives (1 or 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.selfrun import Store, describe

CASES = {
    "done without evidence": (
        ("work", "done", "{work}"),
        2,
        ("has no evidence", "--commit or --artifact", "--report"),
    ),
    "demotion without why": (("state", "place", "{goal}", "--exposure", "search"), 1, ("pass --why",)),
    "a ground that is no record": (
        ("claim", "it holds", "--supports", "0zzz"),
        1,
        ("--supports 0zzz", "`self state list --all` lists ids"),
    ),
    "a bad option": (
        ("question", "which parser?", "--option", "nothing"),
        1,
        ("--option 'nothing' is not \"ANSWER=ACTION\"",),
    ),
    "a bad exit code": (("work", "exited", "{work}", "--code", "999"), 1, ("--code 999: an exit code",)),
    "a project twice": (
        ("project", "add", "app"),
        1,
        ("project 'app' exists already; `self project list` shows them",),
    ),
    "nothing to place": (("state", "place", "{goal}"), 1, ("pass --exposure, --priority or --scope",)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_cli_names_the_flag_and_the_next_command(store: Store, case: str) -> None:
    named = {"work": store.add("work", "write the parser"), "goal": store.add("goal", "ship it")}
    args, code, wanted = CASES[case]
    proc = store.run(*(a.format(**named) for a in args))
    assert proc.returncode == code, describe(proc)
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("self: "), describe(proc)
    for text in wanted:
        assert text in proc.stderr, describe(proc)


def test_the_cli_says_what_to_run_for_a_store_error(store: Store, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = store.run("state", "list", env_extra={"SELF_WORKSPACE": str(empty)})
    assert proc.returncode == 1, describe(proc)
    assert "is not a selfhub workspace" in proc.stderr and "run `self init`" in proc.stderr, describe(proc)
    assert "--workspace PATH" in proc.stderr and proc.stderr.count("\n") == 1, describe(proc)
    again = store.run("init", str(store.root))
    assert again.returncode == 1 and "open it instead of running `self init`" in again.stderr, describe(again)
    (tmp_path / "file").write_text("x")
    blocked = store.run("init", str(tmp_path / "file" / "ws"))
    assert blocked.returncode == 1 and "give `self init` a new or empty folder" in blocked.stderr, describe(
        blocked
    )
