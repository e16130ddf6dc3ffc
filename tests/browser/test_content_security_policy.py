"""Every page works under MAGI's strict Content-Security-Policy with no violation: login,
the new-judgement form, the live page mid-judgement and finished, the list and the admin;
and logging out closes the session's open live pages."""

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser_pages import watch_violations
from tests.support.live_page import AGENTS, CONTENT, box
from tests.support.live_site import submit_judgement


@pytest.fixture
def staff_page(new_context, usernames, live_magi):
    """A logged-in staff user's page, policy violations collected in page.violations."""
    username = usernames()
    live_magi.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; get_user_model().objects"
        f".filter(username={username!r}).update(is_staff=True, is_superuser=True)",
    )
    context = new_context()
    violations = watch_violations(context)
    context.add_cookies(
        [{"name": "sessionid", "value": live_magi.sessions[username], "url": live_magi.url}]
    )
    page = context.new_page()
    page.violations = violations
    return page


def test_the_watch_sees_a_violation_when_there_is_one(staff_page):
    """The check below can fail: an inline style attribute is refused and reported, by
    the page's event and by Chromium's console."""
    staff_page.goto("/judgements/")
    with staff_page.expect_console_message(lambda m: "Content Security Policy" in m.text):
        directive = staff_page.evaluate(INLINE_STYLE_REFUSED)
    assert directive == "style-src-attr"
    assert any(v.startswith("style-src-attr blocked inline") for v in staff_page.violations)
    assert any("Content Security Policy" in v for v in staff_page.violations)


INLINE_STYLE_REFUSED = """() => new Promise((resolve) => {
  document.addEventListener("securitypolicyviolation",
    (event) => resolve(event.violatedDirective), {once: true});
  document.body.insertAdjacentHTML("beforeend", '<p style="color: red">x</p>');
})"""


def test_every_page_works_under_the_policy(new_context, staff_page, llm, live_magi):
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="AAA")

    # Login, as someone not logged in, with a wrong password first (the error render).
    anonymous = new_context()
    anonymous_violations = watch_violations(anonymous)
    login = anonymous.new_page()
    login.goto("/accounts/login/")
    expect(login.get_by_label("Username")).to_be_visible()
    login.get_by_label("Username").fill("nobody")
    login.get_by_label("Password").fill("wrong")
    login.get_by_role("button", name="Log in").click()
    expect(login.get_by_role("alert")).to_be_visible()
    assert anonymous_violations == []

    page = staff_page
    # The new-judgement form, refused once (errors next to the fields), then the live page
    # mid-judgement: updates arrive over the websocket under the policy.
    page.goto("/")
    page.get_by_role("button", name="Judge").click()
    expect(page.locator(".field-error").first).to_be_visible()
    llm.gate.close()
    judgement_id = submit_judgement(page, "Under the policy", CONTENT, AGENTS)
    llm.gate.wait_parked(("model-a", 1), ("model-b", 1), ("model-c", 1))
    expect(box(page, 1)).to_have_attribute("data-state", "thinking")
    llm.gate.allow("model-a", 1)
    expect(box(page, 1)).to_have_attribute("data-state", "pending")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "judging")
    llm.gate.open()
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
    expect(page.locator("#judgement-outcome")).to_contain_text("Panel's decision: Approved")
    # The stylesheet applies: the finished boxes are drawn in the approve colour.
    expect(box(page, 1)).to_have_class(re.compile(r"\bstate-approve\b"))
    assert box(page, 1).evaluate("el => getComputedStyle(el).borderTopStyle") != "none"

    page.goto(f"/judgements/{judgement_id}/")  # finished, loaded afresh
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
    page.goto("/judgements/")
    expect(page.get_by_role("link", name="Under the policy")).to_be_visible()
    page.get_by_role("link", name="Run again").first.click()
    expect(page.get_by_label("Title")).to_have_value("Under the policy")

    # The admin: index, the judgements, one judgement's audit (decisions, LLM attempts).
    page.goto("/admin/")
    expect(page.locator("#site-name")).to_be_visible()
    page.goto("/admin/judgements/judgement/")
    page.get_by_role("link", name="Under the policy").first.click()
    expect(page.locator("pre.magi-wrap").first).to_be_attached()
    assert (
        page.locator("pre.magi-wrap").first.evaluate("el => getComputedStyle(el).whiteSpace")
        == "pre-wrap"
    )
    page.goto("/admin/auth/user/")
    expect(page.locator("#result_list")).to_be_visible()
    assert page.violations == []


def test_logging_out_closes_the_sessions_open_live_page(page, staff_page, llm):
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="AAA")
    llm.gate.close()
    sockets = []
    page.on("websocket", lambda socket: sockets.append(socket))
    judgement_id = submit_judgement(page, "Logged out", CONTENT, AGENTS)
    llm.gate.wait_parked(("model-a", 1), ("model-b", 1), ("model-c", 1))
    expect(box(page, 1)).to_have_attribute("data-state", "thinking")
    assert len(sockets) == 1 and not sockets[0].is_closed()
    # Staff follow the same judgement on a page of their own.
    staff_page.goto(f"/judgements/{judgement_id}/")
    expect(box(staff_page, 1)).to_have_attribute("data-state", "thinking")

    # Log out from another tab of the same browser: the live page's socket closes.
    other = page.context.new_page()
    other.goto("/judgements/")
    with sockets[0].expect_event("close"):
        other.get_by_role("button", name=re.compile("^Log out")).click()
    expect(other).to_have_url(re.compile(r"/accounts/login/"))

    # The next decision reaches the staff page, not the logged-out one, which does not
    # reconnect either (closed as unauthenticated, which htmx does not retry).
    llm.gate.allow("model-a", 1)
    expect(box(staff_page, 1)).to_have_attribute("data-state", "pending")
    expect(box(page, 1)).to_have_attribute("data-state", "thinking")
    assert len(sockets) == 1
    llm.gate.open()
    expect(staff_page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "judging")
    assert len(sockets) == 1


def test_the_interactive_api_docs_work_under_the_policy(staff_page):
    """/api/docs (Swagger UI, served from django-ninja's own files) renders the generated
    document, reached from the site's navigation, with no policy violation."""
    page = staff_page
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="API docs").click()
    expect(page).to_have_url(re.compile(r"/api/docs$"))
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("MAGI")
    submit = page.locator(".opblock-post").filter(has_text="Submit Judgement")
    expect(submit).to_be_visible()
    submit.locator(".opblock-summary").click()
    expect(submit.get_by_text("Idempotency-Key", exact=True)).to_be_visible()
    assert page.violations == []
