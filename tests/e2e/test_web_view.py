"""The web view in a real browser: Debian's chromium (apt: chromium), driven by playwright,
against a real `self serve` process (the team of `apiteam.py`). Sign-in, navigation from the
workspaces to a record, the records table's filter, search, a live update arriving without a
reload, a refused token, sign-out, and hostile record text rendered inert.

Screenshots go to tests/e2e/screenshots/ (ignored by git; the path is printed) for a person
to look at; docs/web-view.png in the README is one of them."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.apiteam import SLUG, WS, Team, running_team

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
if not Path(CHROMIUM).exists():
    pytest.skip("no chromium: `apt-get install chromium` (.ci/run installs it)", allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is in the test extra: pip install -e '.[test]'"
)

SHOTS = Path(__file__).parent / "screenshots"
PHONE = {"width": 390, "height": 844}
HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2"> & "quotes"'


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    with running_team(tmp_path_factory.mktemp("view")) as made:
        made.cli("project", "add", "api", "--desc", "the public API")
        made.cli("convention", "events are never edited")
        made.cli("decide", "render on the server", "--why", "a fast first paint")
        made.cli("decide", "add a cache", "--proposed")
        made.cli("objective", "ship the beta", "--target", "2099-03-31")
        claim = _id(made.cli("claim", "the server renders fast enough", "--state", "accepted", "--json"))
        made.cli("decide", "no client framework", "--supports", claim)
        work = _id(made.cli("work", "add", "write the page templates", "--json"))
        made.cli("work", "start", work)
        made.cli("idea", "a dark theme for the pages")
        made.cli("question", "which browsers matter?")
        made.cli("idea", HOSTILE)
        yield made


def _id(written: str) -> str:
    return str(json.loads(written)["events"][0]["payload"]["entity"])


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(10_000)
    yield opened
    context.close()


def shot(page: Any, name: str) -> Path:
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


def sign_in(page: Any, team: Team, caller: str = "reader", at: str = "/") -> Any:
    answer = page.goto(team.service.url + at)
    assert answer.status == 401, "a page without the cookie is the sign-in form"
    page.get_by_label("Token").fill(str(team.tokens[caller]))
    page.get_by_role("button", name="Sign in").click()
    return page


def test_sign_in_then_workspaces_project_record(page: Any, team: Team) -> None:
    shot_page = page.goto(team.service.url + "/")
    assert shot_page.status == 401
    shot(page, "signin")
    sign_in(page, team)
    page.wait_for_url(team.service.url + "/")
    cookie = next(c for c in page.context.cookies() if c["name"] == "selfhub_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and not cookie["secure"]
    assert page.evaluate("document.cookie") == "", "the script cannot read the token"

    page.get_by_role("link", name=WS, exact=True).click()
    page.wait_for_url(f"**/ws/{WS}")
    page.get_by_role("link", name=SLUG, exact=True).click()
    page.wait_for_url(f"**/ws/{WS}/projects/{SLUG}")
    assert page.locator("h1").inner_text() == SLUG
    for heading in (
        "Waiting on a person",
        "Work in progress",
        "Goals",
        "Objectives",
        "Conventions",
        "Decisions",
    ):
        assert page.get_by_role("heading", name=heading).count() == 1, heading
    assert "add a cache" in page.locator(".waiting").inner_text()
    assert "write the page templates" in page.locator("#h-progress + ul").inner_text()
    assert "target 2099-03-31" in page.locator(".group-objectives").inner_text()
    decision = page.locator(".group-decisions li", has_text="render on the server").inner_text()
    assert "support" not in decision and "blocked" not in decision, "state only where it says something"
    question = page.locator(".group-questions li", has_text="which browsers matter?").inner_text()
    assert "support" not in question, question
    shot(page, "project")

    page.locator(".group-decisions").get_by_role("link", name="no client framework").click()
    page.wait_for_url("**/records/*")
    assert page.locator("h1").inner_text() == "no client framework"
    relations = page.locator(".rel-supports").inner_text()
    assert "the server renders fast enough" in relations
    assert "entity.confirmed" in page.locator(".history").inner_text()
    shot(page, "record")
    page.locator(".rel-supports").get_by_role("link").first.click()  # the claim: cited by the decision
    assert "no client framework" in page.locator(".rel-cited_by").inner_text()


def test_keyboard_signs_in_and_reaches_a_project(page: Any, team: Team) -> None:
    page.goto(team.service.url + f"/ws/{WS}")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.get_by_label("Token").focus()
    page.keyboard.type(str(team.tokens["reader"]))
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/ws/{WS}")  # back to the page that asked for the sign-in
    link = page.get_by_role("link", name=SLUG, exact=True)
    link.focus()
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid", "a visible focus style"
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/projects/{SLUG}")


def test_the_records_table_filters(page: Any, team: Team) -> None:
    sign_in(page, team, at=f"/ws/{WS}/projects/{SLUG}/records")
    page.wait_for_url("**/records")
    every = page.locator("tbody tr").count()
    page.get_by_label("Label").select_option("decision")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**label=decision**")
    texts = page.locator("tbody td:nth-child(2)").all_inner_texts()
    assert set(texts) == {"render on the server", "add a cache", "no client framework"}, texts
    assert page.locator("#count").inner_text() == f"3 of {every} records"
    page.get_by_label("State").select_option("proposed")
    page.get_by_role("button", name="Filter").click()
    assert page.locator("tbody td:nth-child(2)").all_inner_texts() == ["add a cache"]
    shot(page, "records-filtered")
    page.get_by_role("link", name="Clear").click()
    page.get_by_label("Text").fill("DARK theme")
    page.get_by_label("Text").press("Enter")
    assert page.locator("tbody td:nth-child(2)").all_inner_texts() == ["a dark theme for the pages"]


def test_search_across_projects(page: Any, team: Team) -> None:
    team.cli("idea", "a page of API examples", "--project", "api")
    sign_in(page, team)
    page.get_by_label("Search every project").fill("page")
    page.get_by_label("Search every project").press("Enter")
    page.wait_for_url("**/search?q=page")
    hits = page.locator(".hits li").all_inner_texts()
    assert any("a page of API examples" in h and f"{WS} / api" in h for h in hits), hits
    assert any("write the page templates" in h for h in hits), hits
    assert not any("ship the first page" in h for h in hits), (
        "a goal context shows is not searched by default"
    )
    page.get_by_label("every record").check()
    page.get_by_role("button", name="Search", exact=True).last.click()
    page.wait_for_url("**all=1**")
    assert any("ship the first page" in h for h in page.locator(".hits li").all_inner_texts())
    shot(page, "search")
    page.locator(".hits").get_by_role("link", name="a page of API examples").click()
    page.wait_for_url("**/projects/api/records/*")


def test_a_live_update_arrives_without_a_reload(page: Any, team: Team) -> None:
    sign_in(page, team, at=f"/ws/{WS}/projects/{SLUG}")
    page.wait_for_url(f"**/projects/{SLUG}")
    page.wait_for_selector("#live[data-connected='1']", state="attached")
    page.evaluate("window.sameDocument = true")
    text = "a note written while the page was open"
    body = {"events": [{"type": "entity.confirmed", "project": SLUG, "payload": {"text": text}}]}
    with team.service.client(team.tokens["writer"]) as client:
        assert client.post(f"/api/v1/workspaces/{WS}/events", json=body).status_code == 201
    page.locator("#live-events li", has_text=text).wait_for()
    assert page.evaluate("window.sameDocument") is True, "no reload"
    assert page.locator("#live").is_visible()
    shot(page, "live")
    page.locator("#live-events").get_by_role("link", name=text).click()
    assert page.locator("h1").inner_text() == text


def test_a_refused_token_is_told(page: Any, team: Team) -> None:
    page.goto(team.service.url + "/signin")
    page.get_by_label("Token").fill("shb_" + "x" * 43)
    with page.expect_response("**/signin") as posted:
        page.get_by_role("button", name="Sign in").click()
    assert posted.value.status == 401
    assert "This token was refused" in page.get_by_role("alert").inner_text()
    assert not [c for c in page.context.cookies() if c["name"] == "selfhub_session"]
    shot(page, "refused")
    sign_in(page, team, "revoked")  # valid once, revoked since: refused as well
    assert "This token was refused" in page.get_by_role("alert").inner_text()


def test_another_workspace_is_refused_and_sign_out_clears_the_cookie(page: Any, team: Team) -> None:
    sign_in(page, team, "other")
    page.wait_for_url(team.service.url + "/")
    assert page.get_by_role("link", name=WS, exact=True).count() == 0
    answer = page.goto(team.service.url + f"/ws/{WS}/projects/{SLUG}")
    assert answer.status == 403
    assert "does not open that workspace" in page.get_by_role("alert").inner_text()
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url("**/signin")
    assert not [c for c in page.context.cookies() if c["name"] == "selfhub_session"]
    assert page.goto(team.service.url + "/").status == 401


def test_a_form_from_another_site_is_refused(team: Team) -> None:
    """SameSite=Strict keeps the cookie from other sites; the forms also check `Origin`."""
    form = {"token": str(team.tokens["reader"])}
    with httpx.Client(base_url=team.service.url) as client:
        refused = client.post("/signin", data=form, headers={"Origin": "https://elsewhere.example"})
        assert refused.status_code == 403 and "set-cookie" not in refused.headers
        assert client.post("/signout", headers={"Origin": "null"}).status_code == 403
        local = client.post(
            "/signin", data=form | {"next": "//elsewhere.example/x"}, headers={"Origin": team.service.url}
        )
        assert local.status_code == 303 and local.headers["location"] == "/"


def test_hostile_record_text_is_inert(page: Any, team: Team) -> None:
    sign_in(page, team, at=f"/ws/{WS}/projects/{SLUG}/records?label=idea")
    page.wait_for_url("**label=idea")
    page.wait_for_selector("#live[data-connected='1']", state="attached")
    body = {"events": [{"type": "entity.confirmed", "project": SLUG, "payload": {"text": "live " + HOSTILE}}]}
    with team.service.client(team.tokens["writer"]) as client:
        assert client.post(f"/api/v1/workspaces/{WS}/events", json=body).status_code == 201
    page.locator("#live-events li", has_text="live <script>").wait_for()
    assert HOSTILE in page.locator("tbody").inner_text(), "shown as text"
    page.locator("tbody").get_by_role("link", name=HOSTILE).click()
    page.wait_for_url("**/records/*")
    assert page.locator("h1").inner_text() == HOSTILE
    assert page.evaluate("window.pwned") is None, "no script ran"
    assert page.locator("main script, main img, #live script, #live img").count() == 0
    assert page.locator("script").count() == 1, "only the view's own script"


def test_readable_at_phone_width(browser: Any, team: Team) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True)
    phone = context.new_page()
    try:
        sign_in(phone, team, at=f"/ws/{WS}/projects/{SLUG}")
        phone.wait_for_url(f"**/projects/{SLUG}")
        assert phone.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], "no sideways scroll"
        shot(phone, "project-phone")
    finally:
        context.close()
