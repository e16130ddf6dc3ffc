"""The live judgement page in a real browser against a live daphne: rounds, colours,
status, the final panel, the error panel, the agent record, reloads and escaping."""

import re
import time

from playwright.sync_api import expect

from tests.support.browser_pages import DESKTOP, PHONE
from tests.support.live_page import AGENTS, CONTENT, box, expect_box, expect_status
from tests.support.live_site import (
    fill_judgement,
    log_in,
    submit_judgement,
)


def expect_history(page, number: int, *lines: str) -> None:
    items = box(page, number).locator(".agent-history li")
    expect(items).to_have_count(len(lines))
    for item, line in zip(items.all(), lines, strict=True):
        expect(item).to_have_text(re.compile(r"\s+".join(map(re.escape, line.split()))))


def animation_name(page, number: int, timeout: float = 5.0) -> str:
    """The box's animation, read from the box in the page now (a live update may swap it
    out between finding and reading it)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        name = box(page, number).evaluate(
            "el => el.isConnected ? getComputedStyle(el).animationName : null"
        )
        if name is not None:
            return name
    raise AssertionError(f"box {number} kept being replaced")


def test_it_colours_the_boxes_round_by_round_until_approved(new_context, usernames, llm):
    page = new_context().new_page()
    page.goto("/")
    expect(page).to_have_url(re.compile(r"/accounts/login/\?next=/$"))
    log_in(page, usernames())
    llm.script("model-a", votes="AAR")  # approved twice: fixed after round 2
    llm.script("model-b", votes="RAA")  # open after round 2, approves in round 3
    llm.script("model-c", votes="ARR")  # open after round 2, rejects in round 3
    llm.gate.close()

    page.goto("/")
    expect(page.get_by_role("heading", name="New judgement")).to_be_visible()
    fill_judgement(page, "Trip to Japan", CONTENT, AGENTS)
    page.get_by_role("button", name="Judge").click()

    page.wait_for_url(re.compile(r"/judgements/\d+/$"))
    expect(page.locator(".live-title")).to_have_text("Trip to Japan")
    expect(page.locator("#judgement-status")).to_have_attribute(
        "data-status", re.compile("^(idle|judging)$")
    )

    # Round 1: the three calls are in flight, every box flashes.
    llm.gate.wait_parked(("model-a", 1), ("model-b", 1), ("model-c", 1))
    expect_status(page, "judging")
    for number in (1, 2, 3):
        expect_box(page, number, "thinking", thinking=True)
        assert animation_name(page, number) == "magi-flash"
    llm.gate.allow("model-a", 1)
    expect_box(page, 1, "pending")  # yellow: round 1 fixes nothing
    assert animation_name(page, 1) == "none"
    expect_history(page, 1, "R1 Approve model-a says approve in round 1")
    expect_box(page, 2, "thinking", thinking=True)
    expect_box(page, 3, "thinking", thinking=True)
    llm.gate.allow("model-b", 1)
    expect_box(page, 2, "pending")
    expect_history(page, 2, "R1 Reject model-b says reject in round 1")
    llm.gate.allow("model-c", 1)

    # Round 2: approve twice is final (green); anything else stays open (yellow).
    llm.gate.wait_parked(("model-a", 2), ("model-b", 2), ("model-c", 2))
    for number in (1, 2, 3):
        expect_box(page, number, "pending", thinking=True)  # still yellow while it flashes
        assert animation_name(page, number) == "magi-flash"
    expect(page.locator("#judgement-outcome")).to_contain_text("Round 2 of 3")
    llm.gate.allow("model-a", 2)
    expect_box(page, 1, "approve")
    llm.gate.allow("model-b", 2)
    expect_box(page, 2, "pending")
    expect_box(page, 3, "pending", thinking=True)
    page.set_viewport_size(PHONE)
    page.set_viewport_size(DESKTOP)
    llm.gate.allow("model-c", 2)

    # Round 3: every box ends green or red.
    llm.gate.wait_parked(("model-a", 3), ("model-b", 3), ("model-c", 3))
    expect_box(page, 1, "approve", thinking=True)  # fixed green while it answers round 3
    expect_box(page, 2, "pending", thinking=True)
    llm.gate.allow("model-a", 3)
    expect_box(page, 1, "approve")  # its round-3 reject cannot undo 0.5
    llm.gate.allow("model-b", 3)
    expect_box(page, 2, "approve")
    expect_status(page, "judging")
    llm.gate.allow("model-c", 3)
    expect_box(page, 3, "reject")
    expect_status(page, "approved")

    outcome = page.locator("#judgement-outcome")
    expect(outcome.get_by_role("heading", level=2)).to_have_text("Panel's decision: Approved")
    finals = outcome.locator(".finals li")
    expect(finals).to_have_text(
        [
            re.compile(r"Melchior\s*: Approve \(score 0\.5\)"),
            re.compile(r"Balthasar\s*: Approve \(score 0\.9\)"),
            re.compile(r"Casper\s*: Reject \(score 0\.1\)"),
        ]
    )
    expect_history(
        page,
        3,
        "R1 Approve model-c says approve in round 1",
        "R2 Reject model-c says reject in round 2",
        "R3 Reject model-c says reject in round 3",
    )
    page.set_viewport_size(PHONE)


def test_it_ends_rejected_when_two_agents_reject(page, llm):
    llm.script("model-a", votes="RRA")  # 0.5: approve, decided by round 3
    llm.script("model-c", votes="RRR")
    llm.script("model-d", votes="ARR")
    agents = [AGENTS[0], AGENTS[2], ("Gaspar", "model-d", "Approve only quiet actions.")]

    submit_judgement(page, "Rejected plan", CONTENT, agents)

    expect_status(page, "rejected")
    expect_box(page, 1, "approve")
    expect_box(page, 2, "reject")
    expect_box(page, 3, "reject")
    outcome = page.locator("#judgement-outcome")
    expect(outcome.get_by_role("heading", level=2)).to_have_text("Panel's decision: Rejected")
    expect(outcome.locator(".finals li")).to_have_text(
        [
            re.compile(r"Melchior\s*: Approve \(score 0\.5\)"),
            re.compile(r"Casper\s*: Reject \(score 0\.0\)"),
            re.compile(r"Gaspar\s*: Reject \(score 0\.1\)"),
        ]
    )


def test_it_shows_the_error_panel(page, llm):
    llm.script("model-a", votes="AAA")
    llm.script("model-b", votes="AAA")
    llm.script("model-c", votes="AAA", failures={2: ["500"] * 10})

    submit_judgement(page, "Doomed plan", CONTENT, AGENTS)

    expect_status(page, "error")
    outcome = page.locator("#judgement-outcome")
    expect(outcome.get_by_role("heading")).to_have_text("Error")
    message = outcome.locator(".error-message")
    expect(message).to_contain_text("Casper")
    expect(message).to_contain_text("round 2")
    expect(message).to_contain_text("HTTP 500")
    expect(outcome).to_contain_text(re.compile(r"Agent:\s*Casper, round 2\."))
    expect_box(page, 3, "error")
    # What was decided before the failure stays shown.
    expect_history(page, 3, "R1 Approve model-c says approve in round 1")
    expect(box(page, 1).locator(".agent-history li").first).to_have_text(
        re.compile(r"R1\s+Approve")
    )


def test_it_shows_the_full_record_on_hover_and_on_keyboard_focus(page, llm, screenshots):
    llm.script("model-a", votes="AAR")
    llm.script("model-b", votes="RAA")
    llm.script("model-c", votes="ARR")
    judgement_id = submit_judgement(page, "Records", CONTENT, AGENTS)
    expect_status(page, "approved")

    record = page.locator("#agent-box-2-record")
    expect(record).to_be_hidden()
    box(page, 2).hover()
    expect(record).to_be_visible()
    expect(record.get_by_role("heading")).to_have_text("Balthasar: full record")
    expect(record.locator("tbody tr")).to_have_text(
        [
            re.compile(r"1\s*Reject\s*model-b says reject in round 1"),
            re.compile(r"2\s*Approve\s*model-b says approve in round 2"),
            re.compile(r"3\s*Approve\s*model-b says approve in round 3"),
        ]
    )
    expect(record.locator(".agent-score")).to_have_text(
        re.compile(r"Score:\s*0\.9\s*· final:\s*Approve")
    )
    page.screenshot(path=screenshots / "live-record.png", full_page=True)

    # Keyboard only: a fresh page, Tab until the first box has the focus.
    page.goto(f"/judgements/{judgement_id}/")
    page.mouse.move(0, 0)
    first = page.locator("#agent-box-1-record")
    expect(first).to_be_hidden()
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "agent-box-1":
            break
    expect(box(page, 1)).to_be_focused()
    expect(first).to_be_visible()
    expect(first.locator(".agent-score")).to_have_text(
        re.compile(r"Score:\s*0\.5\s*· final:\s*Approve")
    )
    expect(first.locator("tbody tr")).to_have_count(3)
    page.keyboard.press("Tab")
    expect(box(page, 2)).to_be_focused()
    expect(first).to_be_hidden()
    expect(record).to_be_visible()


def test_a_reload_mid_judgement_shows_the_same_state_and_continues_live(page, llm):
    llm.script("model-a", votes="AAA")
    llm.script("model-b", votes="RRR")
    llm.script("model-c", votes="AAA")
    llm.gate.close()
    judgement_id = submit_judgement(page, "Reloaded", CONTENT, AGENTS)
    llm.gate.wait_parked(("model-a", 1), ("model-b", 1), ("model-c", 1))
    llm.gate.allow("model-a", 1)
    expect_box(page, 1, "pending")

    page.reload()
    assert page.url.endswith(f"/judgements/{judgement_id}/")
    expect_status(page, "judging")
    expect_box(page, 1, "pending")
    expect_history(page, 1, "R1 Approve model-a says approve in round 1")
    expect_box(page, 2, "thinking", thinking=True)
    expect_box(page, 3, "thinking", thinking=True)

    # The reloaded page keeps following the deliberation.
    llm.gate.allow("model-b", 1)
    expect_box(page, 2, "pending")
    expect_history(page, 2, "R1 Reject model-b says reject in round 1")
    llm.gate.open()
    expect_status(page, "approved")
    expect_box(page, 1, "approve")
    expect_box(page, 2, "reject")
    expect_box(page, 3, "approve")


def test_it_shows_model_output_and_titles_as_text(page, llm):
    evil = "<script>alert(1)</script><b>x</b>"
    llm.script("model-a", votes="AAA", reason=evil)
    llm.script("model-b", votes="AAA")
    llm.script("model-c", votes="AAA")
    dialogs: list[str] = []

    def dismiss(dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)

    judgement_id = submit_judgement(page, "<i>Escaped</i>", CONTENT, AGENTS)
    expect_status(page, "approved")

    for view in ("live", "reloaded"):
        if view == "reloaded":
            page.goto(f"/judgements/{judgement_id}/")
            expect_status(page, "approved")
        first = box(page, 1)
        expect(first.locator(".agent-history .reason").first).to_have_text(evil)
        expect(first.locator(".agent-record td").nth(2)).to_have_text(evil)
        assert first.locator("b, script").count() == 0, view
        assert page.locator(".triangle script, .triangle b").count() == 0, view
        expect(page.locator(".live-title")).to_have_text("<i>Escaped</i>")
        assert page.locator(".live-title i").count() == 0, view
    assert dialogs == []


def test_the_thinking_box_keeps_still_when_motion_is_reduced(log_in_as, llm):
    page = log_in_as(reduced_motion="reduce")
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="AAA")
    llm.gate.close()
    submit_judgement(page, "Still", CONTENT, AGENTS)
    llm.gate.wait_parked(("model-a", 1), ("model-b", 1), ("model-c", 1))

    expect_box(page, 1, "thinking", thinking=True)
    assert animation_name(page, 1) == "none"
    expect(box(page, 1).locator(".agent-state")).to_be_visible()
    llm.gate.open()
    expect_status(page, "approved")
