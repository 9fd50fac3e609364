"""`self context` keeps to its budget as a process: plain and JSON, one huge record included;
a nonsense budget is refused saying the allowed range."""

from __future__ import annotations

import json

import pytest

from tests.support.selfrun import Store, describe

HUGE = 60_000  # characters: under the 64 KiB event cap, far over any budget


@pytest.fixture(scope="module")
def huge(module_store: Store) -> str:
    unit = module_store.add("work", "x" * HUGE)
    module_store.ok("work", "start", unit)
    return unit


def test_json_keeps_to_the_budget(module_store: Store, huge: str) -> None:
    proc = module_store.run("context", "--json", "--budget", "100")
    assert proc.returncode == 0, describe(proc)
    assert len(proc.stdout) < 4_000, f"{len(proc.stdout)} bytes for a budget of 100 tokens"
    doc = json.loads(proc.stdout)
    assert doc["budget"] == 100
    texts = [row["text"] for section in doc["sections"] for row in section["rows"]]
    assert any("cut to fit" in text and huge in text for text in texts), texts


@pytest.mark.parametrize("budget", ["100", "3000"])
def test_plain_keeps_to_the_budget(module_store: Store, huge: str, budget: str) -> None:
    text = module_store.ok("context", "--plain", "--budget", budget)
    assert len(text.rstrip("\n")) * 0.25 <= int(budget), f"{len(text)} characters for {budget} tokens"
    assert "cut to fit" in text and "xxxxxxxxxx" in text


@pytest.mark.parametrize("budget", ["0", "-1", "10", "99", "1000001"])
def test_a_nonsense_budget_is_refused_with_the_range(module_store: Store, budget: str) -> None:
    for args in (("--plain",), ("--json",)):
        proc = module_store.run("context", *args, "--budget", budget)
        assert proc.returncode == 1, describe(proc)
        assert proc.stdout == "" and "Traceback" not in proc.stderr, describe(proc)
        assert proc.stderr.count("\n") == 1 and f"--budget {budget}" in proc.stderr, describe(proc)
        assert "100 to 1000000" in proc.stderr, describe(proc)


def test_json_that_fits_names_the_budget_given(store: Store) -> None:
    store.add("goal", "a short goal")
    assert store.json("context", "--budget", "5000")["budget"] == 5000
