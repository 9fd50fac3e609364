"""The web view acts, clicked in a real browser (Debian's chromium driven by playwright) against
a real `self serve` process: a writer confirms and declines proposals (a record, a placement),
reviews what a record owes, assesses a claim, starts, blocks, unblocks, reports and finishes
work (done refused without evidence, the refusal on the page) and adds records; each write
shows on another open page through the live stream; a reader sees no control and is refused; a
form needs its session's token and this site's origin. axe-core runs on every page a test
visits and fails on a serious or critical violation.

Screenshots go to tests/e2e/screenshots/ (ignored by git; the path is printed);
docs/web-view-project.png is `project-actions.png`."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support import axe
from tests.support.apiteam import SLUG, WS, Team, running_team

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("no chromium: `apt-get install chromium` (.ci/run installs it)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is in the test extra: pip install -e '.[test]'"
)

SHOTS = Path(__file__).parent / "screenshots"
PROJECT = f"/ws/{WS}/projects/{SLUG}"
COOKIE = "selfhub_session"


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with running_team(tmp_path_factory.mktemp("acts")) as made:
        made.cli("convention", "events are never edited")
        made.cli("decide", "render on the server", "--why", "a fast first paint")
        fast = added(made, "claim", "the server renders fast enough", "--state", "accepted")
        made.cli("decide", "no client framework", "--supports", fast)
        made.cli("claim", "assess", fast, "--state", "disputed", "--why", "slow on old phones")
        unit = added(made, "work", "add", "pick a font")
        made.cli("work", "start", unit)
        made.cli("work", "block", unit, "--on", "decision", "--why", "which license")
        yield made


@pytest.fixture(scope="module")
def axe_js() -> str:
    return axe.source()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield launched
        launched.close()


def opened(browser: Any) -> Iterator[Any]:
    """A browser window of its own (its own cookies)."""
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def window(browser: Any) -> Iterator[Any]:
    yield from opened(browser)


@pytest.fixture
def second_window(browser: Any) -> Iterator[Any]:
    yield from opened(browser)


def added(team: Team, *args: str) -> str:
    """The id of the record `self ARGS --json` added."""
    return str(json.loads(team.cli(*args, "--json"))["events"][0]["payload"]["entity"])


def signed_in(page: Any, team: Team, at: str, caller: str = "writer") -> Any:
    assert page.goto(team.service.url + at).status == 401
    page.get_by_label("Token").fill(str(team.tokens[caller]))
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(team.service.url + at)
    return page


def connected(page: Any) -> None:
    page.wait_for_selector("#live[data-connected='1']", state="attached")


def shot(page: Any, name: str, until: str | None = None) -> Path:
    """The whole page, or its top down to the end of the element `until` selects."""
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    clip = None
    if until is not None:
        box = page.locator(until).bounding_box()
        clip = {"x": 0, "y": 0, "width": page.viewport_size["width"], "height": box["y"] + box["height"] + 16}
    page.screenshot(path=str(path), full_page=True, clip=clip)
    print(f"screenshot: {path}")
    return path


def accessible(page: Any, axe_js: str) -> None:
    found = axe.failing(page, axe_js)
    assert not found, f"axe on {page.url}: {found}"


def inbox_row(page: Any, text: str) -> Any:
    return page.locator(".inbox > li", has_text=text)


def record_page(team: Team, record: str) -> str:
    return f"{PROJECT}/records/{record}"


@pytest.mark.slow  # about 5 s: a browser clicks through several pages
def test_a_proposal_confirmed_in_one_window_shows_in_another(
    window: Any, second_window: Any, team: Team, axe_js: str
) -> None:
    added(team, "decide", "adopt the page cache", "--proposed")
    added(team, "decide", "drop the old theme", "--proposed")
    watcher = signed_in(second_window, team, PROJECT)
    connected(watcher)
    page = signed_in(window, team, PROJECT)
    row = inbox_row(page, "adopt the page cache")
    assert "proposed: it counts once a person confirms it" in row.inner_text()
    before = int(page.locator("#waiting-count").inner_text())
    assert page.locator(".inbox > li").count() == before, "the count is the list's"
    accessible(page, axe_js)
    shot(page, "project-actions", until="section.add")

    row.get_by_role("button", name="Confirm").click()
    page.wait_for_url(team.service.url + PROJECT)
    assert inbox_row(page, "adopt the page cache").count() == 0
    assert int(page.locator("#waiting-count").inner_text()) == before - 1
    assert page.locator(".inbox > li").count() == before - 1
    assert "adopt the page cache" in page.locator(".group-decisions").inner_text()

    news = watcher.locator("#live-events li", has_text="entity.confirmed")
    news.filter(has_text="adopt the page cache").wait_for()
    assert "by ann" in news.first.inner_text()


def test_decline_withdraws_a_proposal_and_only_a_proposal(window: Any, team: Team, axe_js: str) -> None:
    proposal = added(team, "decide", "rewrite it in a weekend", "--proposed")
    page = signed_in(window, team, record_page(team, proposal))
    accessible(page, axe_js)
    page.get_by_label("Why (optional)").fill("too risky before the beta")
    page.get_by_role("button", name="Decline").click()
    page.wait_for_url(team.service.url + record_page(team, proposal))
    assert "retracted" in page.locator("main p.state").inner_text()
    history = page.locator(".history").inner_text()
    assert "entity.retracted" in history and "too risky before the beta" in history

    confirmed = added(team, "decide", "keep the old build")
    page.goto(team.service.url + PROJECT)
    token = form_token(page)
    with _client(team, page) as client:
        refused = client.post(record_page(team, confirmed) + "/decline", data={"form_token": token})
    assert refused.status_code == 409 and "only a proposal is declined" in refused.text
    assert json.loads(team.cli("state", "show", confirmed, "--json"))["status"] == "confirmed"


def test_a_placement_an_agent_proposed_is_declined_from_the_inbox(
    window: Any, team: Team, axe_js: str
) -> None:
    kept = added(team, "convention", "every page renders without scripts")
    team.cli("state", "place", kept, "--exposure", "search", "--why", "rarely read", "--proposed")
    page = signed_in(window, team, PROJECT)
    row = inbox_row(page, "every page renders without scripts")
    assert "→ search" in row.inner_text(), "the inbox says which placement waits"
    accessible(page, axe_js)
    before = int(page.locator("#waiting-count").inner_text())

    row.get_by_role("button", name="Decline").click()
    page.wait_for_url(team.service.url + PROJECT)
    assert inbox_row(page, "every page renders without scripts").count() == 0
    assert int(page.locator("#waiting-count").inner_text()) == before - 1
    shown = json.loads(team.cli("state", "show", kept, "--json"))
    assert (shown["status"], shown["exposure"], shown["pending"]) == ("confirmed", "full", False)
    history = team.cli("state", "show", kept, "--history")
    assert "entity.declined" in history and "declined" in history.rsplit("entity.declined", 1)[1]


def test_assess_a_claim_then_review_what_stood_on_it(window: Any, team: Team, axe_js: str) -> None:
    claim = added(team, "claim", "the cache is always fresh", "--state", "accepted")
    decision = added(team, "decide", "cache every page", "--supports", claim)
    page = signed_in(window, team, record_page(team, claim))
    accessible(page, axe_js)
    page.get_by_label("State").select_option("disputed")
    page.locator("#assess-why").fill("stale pages were seen")
    page.get_by_role("button", name="Assess").click()
    page.wait_for_url(team.service.url + record_page(team, claim))
    assert "disputed" in page.locator("main p.state").inner_text()

    page.goto(team.service.url + PROJECT)
    row = inbox_row(page, "cache every page")
    assert "owes a review: “the cache is always fresh” is disputed" in row.inner_text()
    row.get_by_role("button", name="Review").click()
    page.wait_for_url(team.service.url + PROJECT)
    assert inbox_row(page, "cache every page").count() == 0
    shown = json.loads(team.cli("state", "show", decision, "--json"))
    assert shown["review_owed"] == []


@pytest.mark.slow  # about 5 s: a browser clicks through several pages
def test_work_starts_blocks_unblocks_reports_and_is_done_with_evidence(
    window: Any, team: Team, axe_js: str
) -> None:
    unit = added(team, "work", "add", "draw the icons")
    page = signed_in(window, team, record_page(team, unit))
    state = page.locator("main p.state")
    page.get_by_role("button", name="Start").click()
    page.wait_for_url("**/records/*")
    assert "in-progress" in state.inner_text()

    page.get_by_label("Blocked on").fill("the icon license")
    page.locator("#block-why").fill("legal has not answered")
    page.get_by_role("button", name="Block", exact=True).click()
    page.wait_for_url("**/records/*")
    assert "blocked on the icon license" in state.inner_text()
    accessible(page, axe_js)
    page.get_by_role("button", name="Unblock").click()
    page.wait_for_url("**/records/*")
    assert "in-progress" in state.inner_text()

    with page.expect_response(re.compile(r".*/done$")) as answered:
        page.get_by_role("button", name="Done", exact=True).click()
    assert answered.value.status in (409, 422)
    alert = page.get_by_role("alert").inner_text()
    assert "has no evidence" in alert and "done" not in state.inner_text(), alert
    accessible(page, axe_js)
    shot(page, "done-refused")

    page.locator("#report-text").fill("the icons are drawn")
    page.locator("#report-commit").fill("0123456789abcdef0123456789abcdef01234567")
    page.get_by_role("button", name="Report", exact=True).click()
    page.wait_for_url("**/records/*")
    page.get_by_role("button", name="Done", exact=True).click()
    page.wait_for_url("**/records/*")
    assert "done" in state.inner_text()
    assert page.get_by_role("button", name="Done", exact=True).count() == 0


@pytest.mark.slow  # about 5 s: a browser clicks through several pages
def test_add_each_kind_of_record_from_the_project_page(window: Any, team: Team, axe_js: str) -> None:
    page = signed_in(window, team, PROJECT)
    kinds = {"goal": "goal", "decision": "decision", "claim": "claim", "question": "question"}
    kinds |= {"idea": "idea", "work": "work"}  # the kind offered → the label its record takes
    for kind in kinds:
        page.get_by_label("Kind").select_option(kind)
        page.get_by_label("Text").fill(f"a {kind} from the page")
        page.get_by_role("button", name="Add", exact=True).click()
        page.wait_for_url(team.service.url + PROJECT)
    rows = json.loads(team.cli("state", "list", "--json"))
    made = {r["text"]: r["labels"] for r in rows}
    for kind, label in kinds.items():
        assert made[f"a {kind} from the page"] == [label], (kind, made.get(f"a {kind} from the page"))
    assert "a question from the page" in page.locator(".group-questions").inner_text()

    page.get_by_label("Kind").select_option("claim")
    page.get_by_label("Text").fill("   ")
    with page.expect_response(re.compile(rf".*{PROJECT}/records$")) as answered:
        page.get_by_role("button", name="Add", exact=True).click()
    assert answered.value.status == 422
    assert "text is empty" in page.get_by_role("alert").inner_text()
    assert page.get_by_label("Kind").input_value() == "claim", "the form as it was sent"
    accessible(page, axe_js)


def test_a_reader_sees_no_control_and_is_refused(window: Any, team: Team, axe_js: str) -> None:
    proposal = added(team, "decide", "a proposal a reader cannot answer", "--proposed")
    page = signed_in(window, team, PROJECT, "reader")
    assert "a proposal a reader cannot answer" in page.locator(".waiting").inner_text()
    assert page.locator("main form[method=post]").count() == 0
    assert page.get_by_role("heading", name="Add a record").count() == 0
    page.goto(team.service.url + record_page(team, proposal))
    assert page.locator("main form[method=post]").count() == 0
    accessible(page, axe_js)

    before = team.snapshot()
    with _client(team, page) as client:
        answer = client.post(record_page(team, proposal) + "/confirm", data={"form_token": "x"})
        assert answer.status_code == 403 and "writer" in answer.text
        assert client.post(f"{PROJECT}/records", data={"kind": "idea", "text": "no"}).status_code == 403
    assert team.snapshot() == before


def test_a_form_needs_its_session_token_and_this_site(window: Any, team: Team) -> None:
    proposal = added(team, "decide", "a proposal forms are tried on", "--proposed")
    page = signed_in(window, team, record_page(team, proposal))
    token = form_token(page)
    target = record_page(team, proposal) + "/confirm"
    other = signed_in_elsewhere(team)
    before = team.snapshot()
    with _client(team, page) as client:
        assert client.post(target, data={}).status_code == 403, "no form token"
        assert client.post(target, data={"form_token": other}).status_code == 403, "another session's"
        elsewhere = {"Origin": "https://elsewhere.example"}
        assert client.post(target, data={"form_token": token}, headers=elsewhere).status_code == 403
    with httpx.Client(base_url=team.service.url) as stranger:
        assert stranger.post(target, data={"form_token": token}).status_code == 401, "no cookie"
    assert team.snapshot() == before, "nothing written"
    with _client(team, page) as client:
        answer = client.post(target, data={"form_token": token, "back": "project"})
    assert answer.status_code == 303 and answer.headers["location"] == PROJECT
    assert re.fullmatch(r"[0-9a-f]{40}", answer.headers["selfhub-commit"]), "a write names its commit"


@pytest.mark.slow  # about 5 s: a browser clicks through several pages
def test_the_pages_pass_axe(window: Any, team: Team, axe_js: str) -> None:
    claim = added(team, "claim", "pages load in a second")
    page = window
    page.goto(team.service.url + "/signin")
    accessible(page, axe_js)
    signed_in(page, team, "/")
    for at in (
        "/",
        f"/ws/{WS}",
        PROJECT,
        f"{PROJECT}/records",
        f"{PROJECT}/records?label=decision",
        record_page(team, claim),
        "/search?q=page",
    ):
        assert page.goto(team.service.url + at).status == 200, at
        accessible(page, axe_js)


def form_token(page: Any) -> str:
    return str(page.locator("input[name=form_token]").first.get_attribute("value"))


def signed_in_elsewhere(team: Team) -> str:
    """The form token of another session of the same token."""
    with httpx.Client(base_url=team.service.url) as client:
        client.post("/signin", data={"token": team.tokens["writer"], "next": PROJECT})
        found = re.search(r'name="form_token" value="([^"]+)"', client.get(PROJECT).text)
    assert found is not None
    return found.group(1)


def _client(team: Team, page: Any) -> httpx.Client:
    """An HTTP client with the browser window's session cookie, posting as this site's page does."""
    cookie = next(c["value"] for c in page.context.cookies() if c["name"] == COOKIE)
    return httpx.Client(
        base_url=team.service.url,
        cookies={COOKIE: cookie},
        headers={"Origin": team.service.url},
        timeout=30,
    )


def test_a_writers_pages_are_readable_at_phone_width(browser: Any, team: Team) -> None:
    unit = added(team, "work", "add", "check the pages on a phone")
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        phone = signed_in(context.new_page(), team, PROJECT)
        assert phone.get_by_role("heading", name="Add a record").count() == 1
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390, "no sideways scroll"
        phone.goto(team.service.url + record_page(team, unit))
        assert phone.get_by_role("button", name="Start").count() == 1
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390, "no sideways scroll"
    finally:
        context.close()
