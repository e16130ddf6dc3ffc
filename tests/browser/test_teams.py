"""A team in a real browser against a live daphne: a deploy bot's contested verdict on a
team's panel is held, its reviewer (not staff) is emailed and confirms it from the queue;
a member of another team finds none of it, on the pages and in the API (404, not 403)."""

import json

from playwright.sync_api import expect

from tests.support.live_page import AGENTS

SET_UP = """
import json
from django.contrib.auth.models import User
from judgements.models import ApiToken, Panel, Team
from judgements.configuration import teams
bot, reviewer, outsider = (User.objects.get(username=name) for name in %r)
reviewer.email = reviewer.username + "@example.com"
reviewer.save()
payments, support = Team.objects.create(name="Payments"), Team.objects.create(name="Support")
teams.set_members(payments, [bot, reviewer], None)
teams.set_members(support, [outsider], None)
agents = [{"name": n, "model": m, "criteria": c} for n, m, c in %r]
panel = Panel.objects.create(
    name="Payments gate", owner=reviewer, team=payments, agents=agents, hold_contested=True
)
teams.set_reviewing(panel, None, reviewers=[reviewer])
token, bot_key = ApiToken.issue(bot, "deploy bot")
teams.assign(token, payments)
print(json.dumps({"bot": bot_key, "outsider": ApiToken.issue(outsider, "cli")[1]}))
"""


def signed_in(new_context, live_magi, name: str):
    context = new_context()
    session = live_magi.sessions[name]
    context.add_cookies([{"name": "sessionid", "value": session, "url": live_magi.url}])
    return context.new_page()


def test_a_bot_s_contested_verdict_reaches_its_panel_s_reviewer_and_no_other_team(
    new_context, usernames, llm, live_magi, smtp
):
    bot, reviewer, outsider = usernames(), usernames(), usernames()
    keys = json.loads(
        live_magi.manage("shell", "-v", "0", "-c", SET_UP % ((bot, reviewer, outsider), AGENTS))
    )
    llm.script("model-a", votes="AAA")
    llm.script("model-b", votes="AAA")
    llm.script("model-c", votes="RRR")  # 2-1: contested, and the panel holds it

    reviewer_page = signed_in(new_context, live_magi, reviewer)
    submitted = reviewer_page.request.post(
        "/api/judgements/?wait=20",
        headers={"Authorization": f"Bearer {keys['bot']}"},
        data={"title": "Deploy 4.2 to production", "content": "Release notes: fixes.",
              "panel": "Payments gate"},
    )  # fmt: skip
    assert submitted.status == 201, submitted.text()
    judgement = submitted.json()
    assert judgement["status"] == "held" and judgement["contested"]
    url = f"/judgements/{judgement['id']}/"

    # Held: its reviewer is emailed, through the suite's SMTP server, with the link.
    (email,) = smtp.inbox.wait_for(f"{reviewer}@example.com", timeout=60)
    assert email["Subject"] == "MAGI: waiting for your review: Deploy 4.2 to production"
    assert f"https://magi.example.com{url}" in email.get_payload(decode=True).decode()

    # The reviewer, who is not staff and did not submit it, finds it in the queue.
    reviewer_page.goto("/judgements/")
    reviewer_page.get_by_role("link", name="Review queue").click()
    row = reviewer_page.get_by_role("row", name="Deploy 4.2 to production")
    expect(row).to_contain_text("Held for review")
    row.get_by_role("link", name="Deploy 4.2 to production").click()
    expect(reviewer_page).to_have_url(live_magi.url + url)
    confirm = reviewer_page.locator("details.confirm-form")
    confirm.get_by_label("Reason (required, kept in the audit)").fill("Release notes read.")
    confirm.get_by_role("button", name="Confirm").click()
    expect(reviewer_page.get_by_role("heading", name="Confirmed: Approve")).to_be_visible()
    expect(reviewer_page.locator(".confirmation-who")).to_contain_text(f"By {reviewer}")

    # A member of another team: not found, on the page and in the API; nothing listed.
    outsider_page = signed_in(new_context, live_magi, outsider)
    assert outsider_page.goto(url).status == 404
    outsider_page.goto("/judgements/")
    expect(outsider_page.get_by_text("Deploy 4.2 to production")).to_have_count(0)
    expect(outsider_page.get_by_role("link", name="Review queue")).to_have_count(0)
    read = outsider_page.request.get(
        f"/api/judgements/{judgement['id']}/",
        headers={"Authorization": f"Bearer {keys['outsider']}"},
    )
    assert read.status == 404
    assert "Deploy 4.2" not in read.text()
