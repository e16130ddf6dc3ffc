"""Slack and the browser agree at every step (docs/slack.md): a held verdict is in the
review queue and in the team's channel with its buttons; confirmed with a click in Slack
(a signed request to the live site), it leaves the queue and its page says who confirmed
it as the message does; overridden on the page, its message in Slack says so too."""

import json
import secrets
import urllib.request

from playwright.sync_api import expect

from tests.support.axe_core import describe, violations
from tests.support.slack_requests import block_action, form_body, signed_headers

SETUP = """
from django.contrib.auth.models import User
from judgements.configuration import saving, slack_config, teams
from judgements.intake.json_cases import validate_case
from judgements.intake.start import Submission, submit
from judgements.models import Team
from tests.support.cases import case_for
from tests.support.slack_requests import BOT_TOKEN, CHANNEL, SIGNING_SECRET
# The author is this test's own: the live site is shared by the session's browser tests,
# and another may have left its users a spending limit (test_budgets does).
author = User.objects.create_user(%(author)r)
reviewer = User.objects.get(username=%(reviewer)r)
User.objects.filter(pk=reviewer.pk).update(email=%(email)r)
team = Team.objects.create(name="Slack " + %(author)r)
teams.set_members(team, [author, reviewer], None)
panel = saving.save_panel(owner=author, name="Refunds", agents=case_for()["agents"])
teams.assign(panel, team)
panel.hold_contested = True
panel.save(update_fields=["hold_contested"])
teams.set_reviewing(panel, None, reviewers=[reviewer], four_eyes=True)
slack_config.save(None, team, {"channel": CHANNEL, "direct_messages": False,
                               "bot_token": BOT_TOKEN, "signing_secret": SIGNING_SECRET})
made = []
for title in %(titles)r:
    case = {**case_for(title=title), "agents": None, "panel": "Refunds"}
    case = {k: v for k, v in case.items() if v is not None}
    checked = [validate_case(case, None)]
    made.append(submit(checked, Submission(creator=author)).judgement.pk)
print(json.dumps(made))
"""


def click(live_magi, payload: dict) -> int:
    """A button pressed in Slack: Slack's signed POST to the live site."""
    body = form_body(payload)
    headers = {**signed_headers(body), "Content-Type": "application/x-www-form-urlencoded"}
    request = urllib.request.Request(
        f"{live_magi.url}/slack/interactivity/", data=body, headers=headers
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status


def shown(call) -> str:
    return json.dumps(call.params["blocks"], ensure_ascii=False)


def test_the_review_queue_and_slack_agree_at_every_step(llm, slack, live_magi, log_in_as):
    llm.script("model-a", votes="AAA")
    llm.script("model-b", votes="AAA")
    llm.script("model-c", votes="RRR")  # 2-1: contested, and the panel holds it
    page = log_in_as()
    name = next(u for u, key in live_magi.sessions.items() if key == session_cookie(page))
    author = f"slack-author-{secrets.token_hex(4)}"
    email = f"{name}@example.com"
    slack.add_user("U0REVIEWER", email)
    output = live_magi.manage(
        "shell",
        "-v",
        "0",
        "-c",
        "import json\n"
        + SETUP
        % {
            "author": author,
            "reviewer": name,
            "email": email,
            "titles": ["Refund 4711", "Refund 4712"],
        },
    )
    first, second = json.loads(output.strip().splitlines()[-1])

    # Held: in the queue, and posted with its buttons.
    posts = slack.wait_for("chat.postMessage", 2, timeout=60)
    assert len(posts) == 2, live_magi.log()
    by_judgement = {call.params["blocks"][-1]["elements"][0]["value"]: call for call in posts}
    assert "magi_confirm" in shown(by_judgement[str(first)])
    page.goto("/reviews/")
    expect(page.get_by_role("row", name="Refund 4711")).to_contain_text("Held for review")
    expect(page.get_by_role("row", name="Refund 4712")).to_contain_text("Held for review")

    # Confirmed in Slack: gone from the queue, the page says who, the message too.
    assert click(live_magi, block_action(first, "magi_confirm", "U0REVIEWER")) == 200
    (update,) = slack.wait_for("chat.update", 1)
    assert f"*Confirmed* by {name} at" in shown(update) and "magi_confirm" not in shown(update)
    page.goto("/reviews/")
    expect(page.get_by_role("row", name="Refund 4711")).to_have_count(0)
    expect(page.get_by_role("row", name="Refund 4712")).to_be_visible()
    page.goto(f"/judgements/{first}/")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
    expect(page.locator(".confirmation-who")).to_contain_text(f"By {name}")

    # Overridden on the page: the message in Slack says so at the next sweep.
    page.goto(f"/judgements/{second}/")
    override = page.locator("details.override-form:not(.confirm-form)")
    override.get_by_text("Override the panel's verdict").click()
    override.get_by_role("radio", name="Reject").check()
    override.get_by_label("Reason (required, kept in the audit)").fill("Paid twice already.")
    override.get_by_role("button", name="Override").click()
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "rejected")
    updates = slack.wait_for("chat.update", 2, timeout=60)
    assert len(updates) == 2, live_magi.log()
    assert f"*Overridden* by {name} at" in shown(updates[1])
    page.goto("/reviews/")
    expect(page.get_by_role("row", name="Refund 4712")).to_have_count(0)


def session_cookie(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "sessionid")


MEMBER = """
from django.contrib.auth.models import User
from judgements.configuration import teams
from judgements.models import Team
team = Team.objects.create(name="Slack page " + %(name)r)
teams.set_members(team, [User.objects.get(username=%(name)r)], None)
print(team.pk)
"""


def test_the_teams_slack_page_reads_well_on_a_desktop_and_a_phone(live_magi, log_in_as):
    page = log_in_as()
    name = next(u for u, key in live_magi.sessions.items() if key == session_cookie(page))
    team = live_magi.manage("shell", "-v", "0", "-c", MEMBER % {"name": name}).strip()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"/teams/{team}/slack/")
        page.get_by_role("button", name="Save").click()  # nothing given: every field said
        expect(page.locator(".error-summary")).to_be_visible()
        assert violations(page) == [], describe(violations(page))
        wide = page.evaluate("() => document.documentElement.scrollWidth")
        assert wide <= width, f"{wide} px wide at {width}"
