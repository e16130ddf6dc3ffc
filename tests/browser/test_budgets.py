"""A spending limit in a real browser against a live daphne: the judgement that would
exceed it is refused with a message naming the limit and its reset, and once the spend
falls into the previous period the same judgement is accepted."""

from playwright.sync_api import expect

from tests.support.live_page import AGENTS
from tests.support.live_site import fill_judgement

SPENT = """
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from judgements.intake.schemas import CaseJson, validated
from judgements.intake.start import Submission, submit
from judgements.models import Agent, Budget, LLMAttempt
user = User.objects.get(username=%r)
Budget.objects.create(user=user, period="day", limit_tokens=5000)
case = {"title": "Earlier", "content": "Spent today.",
        "agents": [{"name": n, "model": m, "criteria": c} for n, m, c in %r]}
judgement = submit([validated(CaseJson, case).case()], Submission(creator=user)).judgement
agent = Agent.objects.filter(judgement=judgement).first()
LLMAttempt.objects.create(agent=agent, round=1, attempt=1, model=agent.model,
    provider="default", request={}, outcome="ok", prompt_tokens=4900, completion_tokens=0)
"""

YESTERDAY = """
from datetime import timedelta
from django.utils import timezone
from judgements.models import LLMAttempt
LLMAttempt.objects.filter(agent__judgement__creator__username=%r).update(
    started_at=timezone.now() - timedelta(days=1))
"""

NO_LIMIT = """
from judgements.models import Budget
Budget.objects.filter(user__username=%r).delete()
"""


def test_a_budget_refuses_the_judgement_and_the_next_period_accepts_it(log_in_as, llm, live_magi):
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="AAA")
    page = log_in_as()
    session = next(c["value"] for c in page.context.cookies() if c["name"] == "sessionid")
    name = next(u for u, key in live_magi.sessions.items() if key == session)
    live_magi.manage("shell", "-v", "0", "-c", SPENT % (name, AGENTS))
    try:
        refused_then_accepted(page, live_magi, name)
    finally:
        # The live site is the session's: the next test to sign in as this user must
        # not find a limit it never set.
        live_magi.manage("shell", "-v", "0", "-c", NO_LIMIT % name)


def refused_then_accepted(page, live_magi, name: str) -> None:
    page.goto("/")
    fill_judgement(page, "Team offsite in Lisbon", "Offsite for 6 people, 2 nights.", AGENTS)
    page.get_by_role("button", name="Judge").click()
    refusal = page.get_by_text("Over budget: the budget of 5,000 tokens a day for the user")
    expect(refusal).to_be_visible()
    expect(refusal).to_contain_text("it resets at")
    # What was typed is kept.
    expect(page.get_by_label("Title")).to_have_value("Team offsite in Lisbon")

    live_magi.manage("shell", "-v", "0", "-c", YESTERDAY % name)
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
