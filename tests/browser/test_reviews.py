"""A contested verdict held for a person, in a real browser against a live daphne: the
live page shows the mark and why as the judgement finishes, and a reviewer finds it in
the review queue and confirms it."""

from playwright.sync_api import expect

from tests.support.live_page import AGENTS
from tests.support.live_site import fill_judgement, theme_colour

GRANT = """
from django.contrib.auth.models import Permission, User
user = User.objects.get(username=%r)
user.user_permissions.add(Permission.objects.get(codename="override_judgement"))
"""


def test_a_held_verdict_is_shown_live_and_confirmed_from_the_queue(log_in_as, llm, live_magi):
    llm.script("model-a", votes="AAA")
    llm.script("model-b", votes="AAA")
    llm.script("model-c", votes="RRR")  # 2-1: contested
    page = log_in_as()
    page.goto("/")
    fill_judgement(page, "Team offsite in Lisbon", "Offsite for 6 people, 2 nights.", AGENTS)
    page.get_by_label("If the verdict is contested").select_option("yes")
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")
    url = page.url

    # Live, without a reload: held, with the reason in words.
    status = page.locator("#judgement-status")
    expect(status).to_have_attribute("data-status", "held")
    expect(status).to_contain_text("Held for review")
    contested = page.locator("#judgement-outcome .contested")
    expect(contested.get_by_role("heading")).to_have_text("Contested: held for a person")
    expect(contested).to_contain_text(
        "The panel split 2-1: Casper decided reject against the others' approve."
    )

    # This user becomes a reviewer; the queue is in the navigation.
    name = next(u for u, key in live_magi.sessions.items() if key == session_of(page))
    live_magi.manage("shell", "-v", "0", "-c", GRANT % name)
    page.goto("/judgements/")
    page.get_by_role("link", name="Review queue").click()
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()
    row = page.get_by_role("row", name="Team offsite in Lisbon")
    expect(row).to_contain_text("Held for review")
    row.get_by_role("link", name="Team offsite in Lisbon").click()
    expect(page).to_have_url(url)

    # Held, the confirm form is open; the override form stays folded beside it.
    confirm = page.locator("details.confirm-form")
    expect(confirm).to_have_attribute("open", "")
    expect(confirm.locator("summary")).to_have_text("Confirm the panel's verdict (Approved)")
    confirm.get_by_label("Reason (required, kept in the audit)").fill(
        "Checked the plan with the team lead: affordable."
    )
    confirm.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("heading", name="Confirmed: Approve")).to_be_visible()
    expect(status).to_have_attribute("data-status", "approved")
    expect(page.locator(".confirmation-who")).to_contain_text(f"By {name}")

    page.goto("/reviews/")
    expect(page.locator(".empty-queue")).to_be_visible()


def test_the_override_form_puts_each_radio_beside_its_label_and_a_phone_keeps_the_title(
    log_in_as, llm, live_magi
):
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="AAA")
    page = log_in_as(viewport={"width": 390, "height": 844})
    name = next(u for u, key in live_magi.sessions.items() if key == session_of(page))
    live_magi.manage("shell", "-v", "0", "-c", GRANT % name)
    page.goto("/")
    fill_judgement(page, "Team offsite in Lisbon", "Offsite for 6 people, 2 nights.", AGENTS)
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")

    # Offered as the judgement ends, without a reload.
    page.get_by_text("Override the panel's verdict").click()
    # Approved already: only Reject is offered, and chosen.
    expect(page.get_by_role("radio", name="Approve")).to_have_count(0)
    expect(page.get_by_role("radio", name="Reject")).to_be_checked()
    for choice in ("Reject",):
        radio = page.get_by_role("radio", name=choice)
        label = page.locator("label", has=radio)
        radio_box, label_box = radio.bounding_box(), label.bounding_box()
        # The radio sits at the start of its own label, on the same line.
        assert label_box["x"] - 1 <= radio_box["x"] <= label_box["x"] + 12, choice
        assert (
            abs(
                (radio_box["y"] + radio_box["height"] / 2)
                - (label_box["y"] + label_box["height"] / 2)
            )
            < 8
        ), choice
    page.get_by_role("radio", name="Reject").check()
    page.get_by_label("Reason (required, kept in the audit)").fill("Too expensive, by hand.")
    page.get_by_role("button", name="Override").click()
    status = page.locator("#judgement-status")
    expect(status).to_have_attribute("data-status", "rejected")
    expect(status).to_contain_text("(overridden; panel: Approved)")
    # The decision box below agrees with the verdict in force, in words and colour.
    outcome = page.locator("#judgement-outcome")
    expect(outcome).to_have_attribute("data-verdict", "rejected")
    expect(outcome.get_by_role("heading", level=2)).to_have_text("Verdict in force: Rejected")
    border = outcome.evaluate("(box) => getComputedStyle(box).borderTopColor")
    assert border == theme_colour(page, "--reject")
    # On a phone the long verdict wraps under the title instead of squeezing it.
    title = page.get_by_role("heading", level=1)
    assert title.bounding_box()["height"] < 80
    assert title.bounding_box()["width"] > 200


def session_of(page) -> str:
    return next(c["value"] for c in page.context.cookies() if c["name"] == "sessionid")
