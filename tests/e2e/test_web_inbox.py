"""The project page's inbox and what the pages say of a record, read over real HTTP from a real
`self serve` process: the count of what waits on a person is the list's, each row says why it
waits and names other records by their text; a record page lists a related record once, says
its why once, shows history values in words, and shows state only where it says something."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator

import httpx
import pytest

from tests.support.apiteam import SLUG, WS, Team, running_team

PROJECT = f"/ws/{WS}/projects/{SLUG}"
SAME = "a fast first paint"


def _id(written: str) -> str:
    return str(json.loads(written)["events"][0]["payload"]["entity"])


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with running_team(tmp_path_factory.mktemp("inbox")) as made:
        made.cli("decide", "add a cache", "--proposed")
        accepted = _id(made.cli("claim", "the server renders fast enough", "--state", "accepted", "--json"))
        made.cli("decide", "no client framework", "--supports", accepted)
        made.cli("claim", "assess", accepted, "--state", "disputed")
        unsure = _id(made.cli("claim", "the cache is safe", "--json"))
        made.cli("decide", "cache pages", "--depends-on", unsure)
        unit = _id(made.cli("work", "add", "pick a font", "--json"))
        made.cli("work", "start", unit)
        made.cli("work", "block", unit, "--on", "decision", "--why", "which font")
        made.cli("decide", "render on the server", "--why", SAME, "--rationale", SAME)
        made.cli("question", "which browsers matter?")
        yield made


@pytest.fixture(scope="module")
def client(team: Team) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=team.service.url, timeout=30) as signed:
        assert signed.post("/signin", data={"token": team.tokens["reader"], "next": "/"}).status_code == 303
        yield signed


def text_of(markup: str) -> str:
    """The words of a piece of a page, its tags dropped and its spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def section(page: str, heading_id: str) -> str:
    found = re.search(rf'<section aria-labelledby="{heading_id}".*?</section>', page, re.S)
    assert found is not None, heading_id
    return found.group(0)


def record_of(team: Team, text: str) -> str:
    rows = json.loads(team.cli("state", "list", "--json"))
    return str(next(r["id"] for r in rows if r["text"] == text))


def test_the_inbox_count_is_its_list_and_each_row_says_why(client: httpx.Client) -> None:
    page = client.get(PROJECT).text
    inbox = section(page, "h-waiting")
    rows = re.findall(r'<li><span class="short">.*?</ul>', inbox, re.S)
    count = re.search(r'id="waiting-count">(\d+)<', inbox)
    assert count is not None and int(count.group(1)) == len(rows) == 4, text_of(inbox)
    card = re.search(r"<dt>Waiting on a person</dt><dd>(.*?)</dd>", page, re.S)
    assert card is not None and text_of(card.group(1)) == "4", "the status card says what the list holds"
    said = {text_of(re.sub(r"<ul class=\"reasons\">.*", "", r, flags=re.S)): text_of(r) for r in rows}
    why = " | ".join(said.values())
    assert "add a cache" in why and "proposed: it counts once a person confirms it" in why
    assert "blocked on a decision: which font" in why
    assert "owes a review: “the server renders fast enough” is disputed" in why
    assert "blocked by “the cache is safe”" in why
    assert not re.search(r"— [0-9a-z]{9}\b", text_of(inbox)), "no record named by a bare id"


def test_a_blocker_is_named_by_its_text(client: httpx.Client) -> None:
    decisions = text_of(section(client.get(PROJECT).text, "h-decisions"))
    assert "cache pages blocked by the cache is safe" in decisions, decisions


def test_state_is_shown_only_where_it_says_something(client: httpx.Client) -> None:
    page = client.get(PROJECT).text
    decisions, questions = text_of(section(page, "h-decisions")), text_of(section(page, "h-questions"))
    assert "support clean" not in decisions and "not blocked" not in decisions, decisions
    assert "support" not in questions, questions
    assert "no client framework support flagged" in decisions, "a flagged support says something"


def test_a_record_page_lists_a_related_record_once(client: httpx.Client, team: Team) -> None:
    decision = record_of(team, "cache pages")
    relations = text_of(section(client.get(f"{PROJECT}/records/{decision}").text, "h-relations"))
    assert relations.count("the cache is safe") == 1, relations
    assert "Blocked by" in relations and "Linked" not in relations, relations


def test_why_and_rationale_are_said_once(client: httpx.Client, team: Team) -> None:
    page = text_of(client.get(f"{PROJECT}/records/{record_of(team, 'render on the server')}").text)
    facts = page.split("History")[0]
    assert facts.count(SAME) == 1, facts


def test_history_values_are_words(client: httpx.Client, team: Team) -> None:
    decision = record_of(team, "cache pages")
    history = section(client.get(f"{PROJECT}/records/{decision}").text, "h-history")
    words = text_of(history)
    assert '["decision"]' not in words and '{"target"' not in words, words
    assert "labels decision" in words and f"depends-on {record_of(team, 'the cache is safe')}" in words
    assert f"entity {decision}" not in words, "the record's own id is the page's"
