"""Evaluations in a real browser: import a suite from the page (a bad line first, refused
next to the field with what was typed kept), start a run from the page, watch its
progress bar move while the fake LLM's gate holds the calls, and read the report."""

import re

import pytest
from playwright.sync_api import expect

from judgements.evaluations import charts
from tests.support.browser_evaluations import AGENTS, CASES, CREATE_PANEL, PANEL_NAME, jsonl
from tests.support.browser_pages import PHONE, watch_violations
from tests.support.live_site import rgb

# Every case gets the right verdict, whichever one the scripted error hits; on the
# second, Casper changes his vote in round 2 to the one both others gave in round 1.
VOTES = {
    "model-a": {"marker-one": "AAA", "marker-two": "RRR", "marker-three": "RRR"},
    "model-b": {"marker-one": "AAA", "marker-two": "RRR", "marker-three": "RRR"},
    "model-c": {"marker-one": "AAA", "marker-two": "ARR", "marker-three": "RRR"},
}


# Each heat-map cell's colour and the colour its text is drawn in, as the browser has it.
HEAT_MAP_COLOURS_JS = """(figure) => [...figure.querySelectorAll(".heat-cell")].map((cell) => ({
  fill: cell.querySelector("rect").getAttribute("fill"),
  text: getComputedStyle(cell.querySelector(".heat-count")).fill,
}))"""


def hex_colour(computed: str) -> str:
    return "#" + "".join(f"{channel:02x}" for channel in rgb(computed))


@pytest.fixture
def user_page(new_context, usernames, live_magi):
    """A fresh user's logged-in page, with a saved panel of their own and the page's
    Content-Security-Policy violations collected in page.violations."""
    username = usernames()
    live_magi.manage(
        "shell", "-c", CREATE_PANEL.format(username=username, name=PANEL_NAME, agents=AGENTS)
    )
    context = new_context()
    violations = watch_violations(context)
    context.add_cookies(
        [{"name": "sessionid", "value": live_magi.sessions[username], "url": live_magi.url}]
    )
    page = context.new_page()
    page.violations = violations
    return page


def test_a_user_imports_a_suite_runs_a_panel_and_reads_the_report(user_page, llm):
    page = user_page
    # The first round-1 vote of model-a is a 400, which is final: that judgement ends in
    # error while the others go on (the run's plain calls beside the votes are answered).
    llm.script(
        "model-a", votes_when=VOTES["model-a"], failures={1: ["400"]}, vote_failures_only=True
    )
    for model in ("model-b", "model-c"):
        llm.script(model, votes_when=VOTES[model])

    # Import: a bad line is refused next to the field, naming its line and field.
    page.goto("/")
    page.get_by_role("link", name="How good is my panel?").click()
    expect(page.get_by_role("heading", name="How good is my panel?")).to_be_visible()
    page.get_by_label("Name").fill("Trips")
    bad_lines = jsonl([*CASES[:1], {**CASES[1], "expected": "maybe"}, CASES[2]])
    page.get_by_label("Or paste the lines").fill(bad_lines)
    page.get_by_role("button", name="Import").click()
    errors = page.locator('[data-field="jsonl_text"] .field-error')
    expect(errors).to_have_text(["line 2.expected: Must be 'approve' or 'reject'."])
    expect(page.get_by_label("Name")).to_have_value("Trips")
    expect(page.get_by_label("Or paste the lines")).to_have_value(bad_lines)

    page.get_by_label("Or paste the lines").fill(jsonl(CASES))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="Trips")).to_be_visible()
    expect(page.locator("table.cases tbody tr")).to_have_count(3)
    expect(page.get_by_role("link", name="Export JSONL")).to_be_visible()

    # Start a run with every call held at the gate.
    llm.hold()
    page.get_by_label("Panel", exact=True).select_option(label=PANEL_NAME)
    expect(page.get_by_label("Repeats")).to_have_value("1")
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/evaluations/\d+/$"))
    bar, text = page.locator("progress#run-progress"), page.locator("#run-progress-text")
    expect(text).to_have_text("0 of 3 judged, 3 under way")
    expect(page.locator(".round-count")).to_have_text(["0 of 9 votes"] * 3)
    expect(page.get_by_role("button", name="Cancel the run")).to_be_visible()
    expect(bar).to_have_attribute("max", "3")
    expect(bar).to_have_attribute("value", "0")
    links = page.locator(".run-judgements tbody a")
    expect(links).to_have_count(3)
    expect(links.first).to_have_attribute("href", re.compile(r"^/judgements/\d+/$"))

    # model-a's round-1 calls through: one meets the scripted 400; the others wait at
    # model-b's and model-c's round 1. The page follows without a reload.
    llm.gate.allow("model-a", 1)
    expect(text).to_have_text(
        re.compile(r"^1 of 3 judged, 1 error, 2 under way; about \d+ (s|min) left$")
    )
    expect(page.locator(".round-count").first).to_have_text("2 of 9 votes")
    expect(bar).to_have_attribute("value", "1")
    expect(page.locator(".evaluation-report")).to_have_count(0)

    llm.release()
    expect(text).to_have_text("3 of 3 judged, 1 error")
    expect(bar).to_have_attribute("value", "3")
    report = page.locator(".evaluation-report")
    expect(report.locator('[data-figure="accuracy"]')).to_have_text("100 %")
    figures = report.locator("table.figures:not(.plain-call-figures)").first
    expect(figures.get_by_role("row", name="Errors (counted apart)")).to_contain_text("1")
    heat_map = report.get_by_role("img", name="Confusion matrix")
    expect(heat_map).to_be_visible()
    expect(heat_map.locator(".heat-cell")).to_have_count(4)
    # The numbers in the cells stay readable on every cell's colour (WCAG AA).
    for colours in heat_map.evaluate(HEAT_MAP_COLOURS_JS):
        assert charts.contrast(hex_colour(colours["text"]), colours["fill"]) >= 4.5, colours
    expect(report.get_by_role("img", name="Vote changes per round")).to_be_visible()
    # Done: the live part stops asking.
    expect(page.locator("#evaluation-live")).to_have_attribute("data-done", "true")
    expect(page.locator("#evaluation-live")).not_to_have_attribute("hx-get", re.compile(".*"))

    assert page.violations == []

    # On a phone the report fits the screen: wide tables scroll in their box, the page
    # never sideways.
    page.set_viewport_size(PHONE)
    page.reload()
    expect(report.get_by_role("img", name="Confusion matrix")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
