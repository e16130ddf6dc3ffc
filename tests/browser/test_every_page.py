"""Every page in every state, at 1280 px and on a 390 px phone: a screenshot of each (the
README's tour, with MAGI_SCREENSHOTS=docs) and axe-core's WCAG 2.1 A/AA and best-practice
rules over each, with no violation allowed on MAGI's own pages.

States are made the way a person makes them (the forms, the fake model's gate holding a
judgement where it is to be seen); only the fixtures of a suite and a panel come from the
shell. In the admin, Django's own markup is left out of the check (ADMIN_OWN).
"""

import re

import pytest
from playwright.sync_api import expect

from tests.support.axe_core import describe, violations
from tests.support.browser_evaluations import AGENTS as PANEL_AGENTS
from tests.support.browser_evaluations import CASES, CREATE_PANEL, IMPORT_SUITE, jsonl
from tests.support.live_site import fill_judgement

WIDTHS = {1280: {"width": 1280, "height": 900}, 390: {"width": 390, "height": 844}}
AGENTS = [
    ("Melchior", "model-a", "Approve only legal plans."),
    ("Balthasar", "model-b", "Approve only safe plans."),
    ("Casper", "model-c", "Approve only affordable plans."),
]
CONTENT = "Team offsite in Lisbon: 6 people, 2 nights, 180 EUR a night, train tickets."
MAKE_STAFF = (
    "from django.contrib.auth import get_user_model; get_user_model().objects"
    ".filter(username={username!r}).update(is_staff=True, is_superuser=True)"
)
# The admin's own header, breadcrumbs, sidebar and changelist chrome are Django's markup.
ADMIN_OWN = (
    "#header",
    ".breadcrumbs",
    "#nav-sidebar",
    "#toggle-nav-sidebar",
    "#changelist-filter",
    ".tabular thead",  # a read-only inline's header: Django leaves its first cell empty
    ".inline-group",  # Django scrolls an inline sideways on a phone, not reachable by key
)


class Tour:
    """Visits pages, saving a screenshot of each and collecting axe's findings."""

    def __init__(self, page, folder, width: int) -> None:
        self.page, self.folder, self.width = page, folder, width
        self.found: dict[str, list[dict]] = {}

    def look(self, name: str, exclude: tuple[str, ...] = ()) -> None:
        self.page.screenshot(path=self.folder / f"{name}-{self.width}.png", full_page=True)
        found = violations(self.page, exclude)
        wide = self.page.evaluate("() => document.documentElement.scrollWidth")
        if not exclude and wide > self.width:  # MAGI's pages (not the admin's) fit the screen
            found.append(
                {"id": "too-wide", "impact": "layout", "help": f"{wide} px wide", "targets": []}
            )
        if found:
            self.found[name] = found

    def report(self) -> str:
        return "\n\n".join(f"{name}:\n{describe(found)}" for name, found in self.found.items())


def expect_columns_in_view(page, width: int, last: str) -> None:
    """At 1280 px an admin list's last column ends before its filters begin."""
    if width == 1280:
        column = page.locator(f"th.column-{last}").bounding_box()
        filters = page.locator("#changelist-filter").bounding_box()
        assert column["x"] + column["width"] <= filters["x"], (column, filters)


def judge(page, title: str, hold: bool = False) -> None:
    page.goto("/")
    fill_judgement(page, title, CONTENT, AGENTS)
    if hold:
        page.get_by_label("If the verdict is contested").select_option("yes")
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")


def status(page):
    return page.locator("#judgement-status")


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_reads_well_and_passes_axe(
    width, new_context, usernames, live_magi, llm, screenshots
):
    username = usernames()
    live_magi.manage("shell", "-c", MAKE_STAFF.format(username=username))
    live_magi.manage(
        "shell",
        "-c",
        CREATE_PANEL.format(username=username, name="Travel desk", agents=PANEL_AGENTS),
    )
    suite_name = f"Trips {width}"
    live_magi.manage(
        "shell",
        "-c",
        IMPORT_SUITE.format(username=username, data=jsonl(CASES)).replace("Slow cases", suite_name),
    )
    context = new_context(viewport=WIDTHS[width])
    context.add_cookies(
        [{"name": "sessionid", "value": live_magi.sessions[username], "url": live_magi.url}]
    )
    page = context.new_page()
    tour = Tour(page, screenshots, width)
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="AAA")

    # The new-judgement page: blank, filled, refused.
    page.goto("/")
    expect(page.get_by_role("heading", name="New judgement")).to_be_visible()
    tour.look("new-judgement-blank")
    fill_judgement(page, "Team offsite", CONTENT, AGENTS)
    tour.look("new-judgement-filled")
    page.get_by_label("Content").fill("")
    page.get_by_role("button", name="Judge").click()
    expect(page.locator(".error-summary")).to_be_focused()
    tour.look("new-judgement-errors")

    # A judgement live: mid-deliberation, then finished, then overridden.
    llm.gate.close()
    llm.gate.allow("model-a", 1)
    llm.gate.allow("model-b", 1)
    llm.gate.allow("model-c", 1)
    judge(page, "Team offsite in Lisbon")
    llm.gate.wait_parked(("model-a", 2), ("model-b", 2), ("model-c", 2))
    expect(page.locator("#agent-box-1")).to_have_attribute("data-thinking", "true")
    expect(page.locator("#agent-box-1 .agent-history li")).to_have_count(1)
    tour.look("live-judging")
    llm.gate.open()
    expect(status(page)).to_have_attribute("data-status", "approved")
    expect(page.get_by_text("Override the panel's verdict")).to_be_visible()
    tour.look("live-finished")
    page.get_by_text("Override the panel's verdict").click()
    page.get_by_label("Reason (required, kept in the audit)").fill("Too expensive, by hand.")
    page.get_by_role("button", name="Override").click()
    expect(status(page)).to_have_attribute("data-status", "rejected")
    tour.look("live-overridden")

    # Held for a person: a 2-1 split, asked to be held.
    llm.script("model-c", votes="RRR")
    judge(page, "A held one", hold=True)
    expect(status(page)).to_have_attribute("data-status", "held")
    expect(page.locator("details.confirm-form")).to_have_attribute("open", "")
    tour.look("live-held")

    # An error: one agent's call refused for good.
    llm.script("model-b", votes="AAA", failures={1: ["400"]})
    judge(page, "One that fails")
    expect(status(page)).to_have_attribute("data-status", "error")
    tour.look("live-error")
    llm.script("model-b", votes="AAA")
    llm.script("model-c", votes="AAA")

    # Lists: history, the review queue, panels, tokens.
    page.goto("/judgements/")
    expect(page.get_by_role("link", name="Team offsite in Lisbon").first).to_be_visible()
    tour.look("history")
    page.get_by_label("From").fill("2026-05-02")
    page.get_by_label("To").fill("2026-05-01")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator(".error-summary")).to_be_visible()
    tour.look("history-errors")
    page.goto("/reviews/")
    expect(page.get_by_role("link", name="A held one").first).to_be_visible()
    tour.look("review-queue")
    page.goto("/panels/")
    tour.look("panels")
    page.get_by_role("link", name="Edit").first.click()
    expect(page.get_by_role("heading", name=re.compile("Edit panel"))).to_be_visible()
    tour.look("panel-edit")
    page.goto("/tokens/")
    page.get_by_label("What it is for").fill("CI deploy gate")
    page.get_by_role("button", name="Create a token").click()
    expect(page.locator("#new-token-key")).to_be_visible()
    tour.look("tokens")

    # Evaluations: the suites, a suite, a run under way, its report, two runs compared.
    page.goto("/suites/")
    tour.look("suites")
    page.get_by_role("link", name=suite_name).click()
    expect(page.get_by_role("heading", name=suite_name)).to_be_visible()
    tour.look("suite")
    llm.gate.close()
    page.get_by_label("Panel", exact=True).select_option(label="Travel desk")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/evaluations/\d+/$"))
    llm.gate.allow("model-a", 1)
    expect(page.locator(".round-count").first).to_have_text("3 of 9 votes")
    tour.look("run-under-way")
    llm.gate.open()
    expect(page.locator("#run-progress-text")).to_have_text("3 of 3 judged")
    expect(page.locator(".evaluation-report")).to_be_visible()
    tour.look("run-report")
    first_run = page.url
    page.get_by_role("link", name=suite_name, exact=True).click()
    page.get_by_label("Panel", exact=True).select_option(label="Travel desk")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/evaluations/\d+/$"))
    expect(page.locator("#run-progress-text")).to_have_text("3 of 3 judged")
    page.get_by_role("link", name=re.compile(r"^Run \d+: Travel desk$")).first.click()
    expect(page.get_by_role("heading", name="Two runs side by side")).to_be_visible()
    tour.look("run-compare")
    assert first_run

    # The admin: the judgements, one judgement's audit, the attempts, one attempt.
    page.goto("/admin/judgements/judgement/")
    expect_columns_in_view(page, width, "duration_display")
    tour.look("admin-judgements", ADMIN_OWN)
    page.get_by_role("link", name="Team offsite in Lisbon").first.click()
    # A long page (every attempt's chat): looked at once loaded, not while it streams in.
    page.wait_for_url(re.compile(r"/admin/judgements/judgement/\d+/change/$"))
    expect(page.locator(".submit-row")).to_be_visible()
    tour.look("admin-judgement", ADMIN_OWN)
    page.goto("/admin/judgements/llmattempt/")
    expect_columns_in_view(page, width, "started")
    tour.look("admin-attempts", ADMIN_OWN)
    page.locator("#result_list tbody a").first.click()
    page.wait_for_url(re.compile(r"/admin/judgements/llmattempt/\d+/change/$"))
    expect(page.locator(".magi-chat")).to_be_visible()
    tour.look("admin-attempt", ADMIN_OWN)

    assert not tour.found, tour.report()
