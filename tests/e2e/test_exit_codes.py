"""Exit 1 is bad input, and its message says what to do; nothing is written."""

from __future__ import annotations

import re

import pytest

from tests.support.selfrun import Store, describe


@pytest.fixture(scope="module")
def setup(module_store: Store) -> dict[str, str]:
    """Two records whose ids share a prefix (ids made close in time share their first chars)."""
    first = module_store.add("idea", "first of two")
    second = module_store.add("idea", "second of two")
    common = first[: next(i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b)]
    assert len(common) >= 3, (first, second)
    return {"first": first, "second": second, "prefix": common[:3]}


CASES = {
    "invalid slug": (
        ("project", "add", "Bad Slug"),
        {},
        ["'Bad Slug' is not a valid project slug", "lowercase letters, digits"],
    ),
    "invalid date": (
        ("objective", "ship it", "--target", "2026-13-01"),
        {},
        ["'2026-13-01' is not a date", "YYYY-MM-DD"],
    ),
    "unknown id prefix": (
        ("state", "show", "zzzzzz"),
        {},
        ["no record has an id starting with 'zzzzzz'", "self state list --all"],
    ),
    "ambiguous id prefix": (
        ("state", "show", "{prefix}"),
        {},
        ["'{prefix}' is ambiguous", "{first}", "type more characters"],
    ),
    "unknown flag": (("state", "list", "--bogus"), {}, ["--bogus", "self state list --help"]),
    "no workspace": (
        ("state", "list"),
        {"SELF_WORKSPACE": None},
        ["no workspace store selected", "self init DIR", "SELF_WORKSPACE"],
    ),
    "no project": (
        ("state", "list"),
        {"SELF_PROJECT": None},
        ["no project selected", "--project SLUG", "SELF_PROJECT"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_exits_1_saying_what_to_do(module_store: Store, setup: dict[str, str], case: str) -> None:
    args, env_extra, needles = CASES[case]
    before = module_store.files()
    proc = module_store.run(*(a.format(**setup) for a in args), env_extra=env_extra)
    assert proc.returncode == 1, describe(proc)
    assert "Traceback" not in proc.stderr, describe(proc)
    assert proc.stdout == "", describe(proc)
    assert proc.stderr.startswith("self: "), describe(proc)
    for needle in needles:
        assert needle.format(**setup) in proc.stderr, describe(proc)
    assert module_store.files() == before, "bad input changed the store"


def test_ok_exits_0_and_names_what_it_wrote(store: Store) -> None:
    proc = store.run("idea", "a fine idea")
    assert proc.returncode == 0, describe(proc)
    assert proc.stderr == "", describe(proc)
    assert re.fullmatch(r"entity\.confirmed [0-9a-z]{10,25}\n", proc.stdout), proc.stdout
