"""Escalation in a real browser against a live daphne (issue 56): a panel's page names the
panel it escalates to; a case the first panel contests is decided by the second, live, and
each level's page shows its own triangle with the levels linked in order; a case both
contest waits for a person; and a panel another user owns is refused beside the field.
The first judgement's page also shows each later level as its own triangle, live."""

import re

from playwright.sync_api import expect

from tests.support.browser_evaluations import CREATE_PANEL

CHEAP = [
    {"name": "Melchior", "model": "model-a", "criteria": "Approve only legal plans."},
    {"name": "Balthasar", "model": "model-b", "criteria": "Approve only safe plans."},
    {"name": "Casper", "model": "model-c", "criteria": "Approve only affordable plans."},
]
# The stronger panel runs on model-d; its Casper's criteria carry a marker a script can
# answer apart.
STRONG = [
    {"name": "Melchior", "model": "model-d", "criteria": "Approve only legal plans, strictly."},
    {"name": "Balthasar", "model": "model-d", "criteria": "Approve only safe plans, strictly."},
    {"name": "Casper", "model": "model-d", "criteria": "strong-casper: only affordable plans."},
]
THEIRS = """
from judgements.models import Panel
print(Panel.objects.get(owner__username={username!r}).pk)
"""
HOLD = """
from judgements.models import Panel
Panel.objects.filter(owner__username={username!r}, name="Strong").update(hold_contested=True)
"""


def judge_with_cheap(page, title: str, content: str) -> None:
    page.goto("/")
    page.get_by_label("Saved panel").select_option(label="Cheap")
    page.get_by_role("button", name="Fill in the agents").click()
    page.get_by_label("Title").fill(title)
    page.get_by_label("Content").fill(content)
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url(re.compile(r"/judgements/\d+/$"))


def test_a_contested_verdict_goes_to_the_stronger_panel_before_a_person(
    new_context, usernames, live_magi, llm
):
    username, stranger = usernames(), usernames()
    for name, agents in (("Cheap", CHEAP), ("Strong", STRONG)):
        live_magi.manage(
            "shell", "-c", CREATE_PANEL.format(username=username, name=name, agents=agents)
        )
    live_magi.manage("shell", "-c", HOLD.format(username=username))
    live_magi.manage(
        "shell", "-c", CREATE_PANEL.format(username=stranger, name="Theirs", agents=STRONG)
    )
    context = new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": live_magi.sessions[username], "url": live_magi.url}]
    )
    page = context.new_page()

    # The panel's page names the panel it escalates to.
    page.goto("/panels/")
    page.get_by_role("row", name=re.compile("Cheap")).get_by_role("link", name="Edit").click()
    field = page.get_by_label("Escalate unkept verdicts to")
    # Another user's panel, posted as if it were a choice: refused beside the field, and
    # nothing typed is lost.
    theirs = (
        live_magi.manage("shell", "-c", THEIRS.format(username=stranger)).strip().splitlines()[-1]
    )
    field.evaluate("(select, value) => { select.options[1].value = value; }", theirs)
    field.select_option(index=1)
    page.get_by_label("Description").fill("The first level.")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".field-error").first).to_contain_text(
        f"No panel {theirs} that this panel's team may use."
    )
    expect(page.get_by_label("Description")).to_have_value("The first level.")
    page.goto("/panels/")
    page.get_by_role("row", name=re.compile("Cheap")).get_by_role("link", name="Edit").click()
    page.get_by_label("Escalate unkept verdicts to").select_option(label="Strong")
    page.get_by_role("button", name="Save").click()
    page.goto("/panels/")
    page.get_by_role("row", name=re.compile("Cheap")).get_by_role("link", name="Edit").click()
    expect(page.get_by_label("Escalate unkept verdicts to")).to_have_value(re.compile(r"^\d+$"))
    expect(page.locator("#cascade-heading")).to_have_text("Escalation: the chain's certificate")

    # The cheap panel splits 2-1 (contested); the strong one agrees: decided at level 2.
    llm.script("model-a", votes="AAA")
    llm.script("model-b", votes="AAA")
    llm.script("model-c", votes="AAA", votes_when={"marker-split": "RRR"})
    llm.script("model-d", votes="AAA")
    llm.gate.close()
    judge_with_cheap(page, "Offsite in Porto", "marker-split: 6 people, 2 nights.")
    # The first judgement's page, drawn while its level runs, shows each later level as
    # its own triangle once it starts, in order, updated live.
    expect(page.locator("#level-2-triangle")).to_have_count(0)
    for model in ("model-a", "model-b", "model-c"):
        for round_number in (1, 2, 3):
            llm.gate.allow(model, round_number)
    llm.gate.wait_parked(("model-d", 1))
    second = page.locator("#level-2-triangle")
    expect(second).to_have_attribute("data-status", "judging")
    expect(second.get_by_role("link", name="Level 2: Strong")).to_be_visible()
    for position in (1, 2, 3):
        expect(page.locator(f"#level-2-agent-box-{position}")).to_have_attribute(
            "data-thinking", "true"
        )
    llm.gate.open()
    expect(second).to_have_attribute("data-status", "approved")
    expect(page.locator("#level-2-agent-box-3")).to_contain_text("Casper")
    expect(page.locator("#level-2-agent-box-3")).to_have_attribute("data-state", "approve")
    # The first level's own triangle stays its own, below its title.
    expect(page.locator("#agent-box-3")).to_have_attribute("data-state", "reject")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
    # Reviewing the first level is refused: its page says where the story is reviewed.
    expect(page.locator(".review-elsewhere")).to_contain_text("Level 2: Strong")
    levels = page.locator("#judgement-levels")
    expect(levels.get_by_role("heading", name="Escalation")).to_be_visible()
    expect(levels.locator('[data-level="1"]')).to_contain_text("escalated to level 2")
    expect(levels.locator('[data-level="2"]')).to_contain_text("(verdict in force)")
    expect(levels).to_contain_text("This panel did not keep its verdict")
    # Level 2 is its own judgement with its own triangle, linked back to level 1.
    levels.locator(".level-list").get_by_role("link", name="Level 2: Strong").click()
    page.wait_for_url(re.compile(r"/judgements/\d+/$"))
    expect(page.locator(".triangle")).to_be_visible()
    expect(page.locator("#agent-box-3")).to_contain_text("Casper")
    expect(page.locator("#judgement-levels [aria-current=page]")).to_have_text("Level 2: Strong")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
    page.locator("#judgement-levels").get_by_role("link", name="Level 1: Cheap").click()
    page.wait_for_url(re.compile(r"/judgements/\d+/$"))

    # Both panels split: the story waits for a person at its last level.
    llm.script("model-d", votes="AAA", votes_when={"strong-casper": "RRR"})
    judge_with_cheap(page, "Offsite in Lisbon", "marker-split: 8 people, 3 nights.")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "held")
    levels = page.locator("#judgement-levels")
    expect(levels.locator('[data-level="2"]')).to_contain_text("Held for review")


# Issue 70: a story of three levels, each level's own decision beside the story's verdict.
# Each level's criteria carry a marker a script answers apart: the middle level's Casper
# rejects, and the last level, on the first level's models, rejects with every agent.
MIDDLE = [
    dict(agent, model="model-d", criteria=f"middle-{agent['name'].lower()}: {agent['criteria']}")
    for agent in CHEAP
]
LAST = [
    dict(agent, criteria=f"strong-{agent['name'].lower()}: {agent['criteria']}") for agent in CHEAP
]
CHAIN = """
from judgements.models import Panel
mine = Panel.objects.filter(owner__username={username!r})
Panel.objects.filter(pk=mine.get(name="Cheap").pk).update(escalate_to=mine.get(name="Middle"))
Panel.objects.filter(pk=mine.get(name="Middle").pk).update(escalate_to=mine.get(name="Strong"))
"""
SUPERUSER = """
from django.contrib.auth import get_user_model
get_user_model().objects.filter(username={username!r}).update(is_staff=True, is_superuser=True)
"""


def test_a_three_level_story_says_each_level_s_decision_and_the_verdict_in_force(
    new_context, usernames, live_magi, llm
):
    """Level 1 (Cheap) and level 2 (Middle) each approve 2-1, contested, and escalate;
    level 3 (Strong) rejects unanimously, in force. Every page, live update, history row
    and admin row says each level's own decision, that it escalated, and the story's
    verdict, Rejected, from level 3."""
    username = usernames()
    for name, agents in (("Cheap", CHEAP), ("Middle", MIDDLE), ("Strong", LAST)):
        live_magi.manage(
            "shell", "-c", CREATE_PANEL.format(username=username, name=name, agents=agents)
        )
    live_magi.manage("shell", "-c", CHAIN.format(username=username))
    live_magi.manage("shell", "-c", SUPERUSER.format(username=username))
    context = new_context()
    context.add_cookies(
        [{"name": "sessionid", "value": live_magi.sessions[username], "url": live_magi.url}]
    )
    page = context.new_page()
    llm.script("model-a", votes="AAA", votes_when={"strong-": "RRR"})
    llm.script("model-b", votes="AAA", votes_when={"strong-": "RRR"})
    llm.script("model-c", votes="AAA", votes_when={"strong-": "RRR", "marker-split": "RRR"})
    llm.script("model-d", votes="AAA", votes_when={"middle-casper": "RRR"})
    llm.gate.close()
    judge_with_cheap(page, "Offsite in Faro", "marker-split: 5 people, 2 nights.")
    for model in ("model-a", "model-b", "model-c"):
        for round_number in (1, 2, 3):
            llm.gate.allow(model, round_number)
    llm.gate.wait_parked(("model-d", 1))
    # Level 2 runs: the first page names it as where the story would be reviewed.
    elsewhere = page.locator(".review-elsewhere")
    expect(elsewhere).to_contain_text("Level 2: Middle")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "judging")
    # Level 1's calls are done: closing again holds level 3's, on the same models.
    llm.gate.close()
    for round_number in (1, 2, 3):
        llm.gate.allow("model-d", round_number)
    llm.gate.wait_parked(("model-a", 1))
    # Level 3 started: the link moved live, without a reload; level 2 says its own.
    expect(elsewhere).to_contain_text("Level 3: Strong")
    second = page.locator("#level-2-triangle")
    expect(second).to_have_attribute("data-status", "approved")
    expect(second).to_have_attribute("data-escalated", "true")
    expect(second).to_contain_text("escalated to level 3")
    expect(page.locator("#level-3-triangle")).to_have_attribute("data-status", "judging")
    llm.gate.open()
    badge = page.locator("#judgement-status")
    expect(badge).to_have_attribute("data-status", "rejected")
    expect(badge).to_have_attribute("data-in-force-level", "3")
    expect(badge).to_contain_text("this level decided Approved and escalated")
    expect(page.locator("#level-3-triangle")).to_have_attribute("data-status", "rejected")
    outcome = page.locator("#judgement-outcome")
    expect(outcome).to_contain_text("This level's decision: Approved, escalated to level 2")
    expect(outcome).not_to_contain_text("review queue")
    levels = page.locator("#judgement-levels")
    for level, decision, escalated in (
        ("1", "approved", "true"),
        ("2", "approved", "true"),
        ("3", "rejected", "false"),
    ):
        item = levels.locator(f'[data-level="{level}"]')
        expect(item).to_have_attribute("data-decision", decision)
        expect(item).to_have_attribute("data-escalated", escalated)
    expect(levels.locator('[data-level="3"]')).to_contain_text("(verdict in force)")
    ids = {
        level: levels.locator(f'[data-level="{level}"]').get_attribute("data-judgement")
        for level in ("1", "2", "3")
    }

    # Level 2's own page: its decision beside its triangle, the story's verdict above.
    levels.get_by_role("link", name="Level 2: Middle").click()
    page.wait_for_url(re.compile(rf"/judgements/{ids['2']}/$"))
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "rejected")
    expect(page.locator("#judgement-status")).to_contain_text("at level 3: Strong")
    expect(page.locator("#judgement-outcome")).to_contain_text(
        "This level's decision: Approved, escalated to level 3"
    )
    expect(page.locator("#judgement-outcome")).to_contain_text("Contested: escalated to level 3")
    expect(page.locator("#judgement-outcome")).not_to_contain_text("review queue")

    # The history: each level's row its own decision; no "Contested" where no one reviews.
    page.goto("/judgements/")
    for level in ("1", "2"):
        row = page.locator(f"#judgement-row-{ids[level]}")
        expect(row).to_contain_text("Approved")
        expect(row).to_contain_text(f"escalated to level {int(level) + 1}")
        expect(row).to_contain_text("the story's verdict: Rejected")
        expect(row).to_contain_text("Not kept: escalated")
        expect(row.locator(".contested-flag")).to_have_count(0)
    last = page.locator(f"#judgement-row-{ids['3']}")
    expect(last).to_contain_text("Rejected")
    expect(last).not_to_contain_text("escalated to")

    # The admin's list: the same, short.
    page.goto("/admin/judgements/judgement/?q=Faro")
    rows = page.locator("#result_list tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("#result_list")).to_contain_text(
        "Approved, escalated to level 3 (the story's verdict: Rejected)"
    )
    expect(page.locator("#result_list")).to_contain_text(
        "Approved, escalated to level 2 (the story's verdict: Rejected)"
    )
    expect(page.locator("#result_list td.field-trust_display", has_text="escalated")).to_have_count(
        2
    )
