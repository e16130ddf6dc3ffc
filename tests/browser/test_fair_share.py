"""A person's judgement is not queued behind an evaluation run (judgements/llm/call_slots.py), in a
real browser against daphne: a provider that takes two calls at once, a run of slow cases
holding its share, and a judgement typed meanwhile that finishes while the run waits.
The slowness is the fake model's gate, so the order is the test's, never a clock's."""

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser_evaluations import (
    AGENTS,
    CASES,
    CREATE_PANEL,
    IMPORT_SUITE,
    PANEL_NAME,
    jsonl,
)
from tests.support.live_site import LiveMagi, fill_judgement

PERSONS_AGENTS = [
    ("Melchior", "model-d", "Approve only legal plans."),
    ("Balthasar", "model-d", "Approve only safe plans."),
    ("Casper", "model-d", "Approve only affordable plans."),
]


@pytest.fixture(scope="module")
def two_call_magi(gated_llm, tmp_path_factory):
    """MAGI whose provider takes two calls at once: a run may hold one of them."""
    magi = LiveMagi(
        tmp_path_factory.mktemp("magi-two-calls"),
        gated_llm.base_url,
        users=1,
        MAGI_DEFAULT_CONCURRENCY="2",
    )
    magi.start()
    (username,) = magi.usernames
    magi.manage(
        "shell", "-c", CREATE_PANEL.format(username=username, name=PANEL_NAME, agents=AGENTS)
    )
    magi.manage("shell", "-c", IMPORT_SUITE.format(username=username, data=jsonl(CASES)))
    yield magi
    magi.stop()


def test_a_persons_judgement_finishes_while_a_run_of_slow_cases_waits(browser, two_call_magi, llm):
    for model in ("model-a", "model-b", "model-c", "model-d"):
        llm.script(model, votes="AAA")
    magi = two_call_magi
    context = browser.new_context(base_url=magi.url)
    context.add_cookies(
        [{"name": "sessionid", "value": magi.sessions[magi.usernames[0]], "url": magi.url}]
    )
    run_page = context.new_page()
    llm.hold()
    run_page.goto("/suites/")
    run_page.get_by_role("link", name="Slow cases").click()
    expect(run_page.get_by_label("Panel", exact=True)).to_be_visible()
    run_page.get_by_label("Panel", exact=True).select_option(label=PANEL_NAME)
    run_page.get_by_role("button", name="Start the run").click()
    run_page.wait_for_url(re.compile(r"/evaluations/\d+/$"))
    # The run's one call allowed in flight waits at the gate: the run is stuck there.
    parked = llm.gate.wait_parked_other_than(set())
    assert parked[0] in ("model-a", "model-b", "model-c")

    page = context.new_page()
    page.goto("/")
    fill_judgement(page, "A person's request", "A train ticket to Lyon, 40 EUR.", PERSONS_AGENTS)
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")
    # Its calls get the slot the run may not take, one after another, round by round.
    for round_number in (1, 2, 3):
        llm.gate.wait_parked(("model-d", round_number))
        llm.gate.allow("model-d", round_number)
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
    expect(run_page.locator("#run-progress-text")).to_contain_text("0 of 3 judged")

    llm.release()
    expect(run_page.locator("#run-progress-text")).to_have_text("3 of 3 judged")
    context.close()
