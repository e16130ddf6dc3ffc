"""Live updates change the page in place: a box focused from the keyboard keeps the focus
and its open record while decisions arrive, its own included."""

import re

from playwright.sync_api import expect

from tests.support.live_page import AGENTS, CONTENT, box
from tests.support.live_site import submit_judgement


def tab_to(page, element_id: str) -> None:
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == element_id:
            return
    raise AssertionError(f"Tab never reached #{element_id}")


def test_a_focused_box_keeps_the_focus_and_its_open_record_across_updates(page, llm):
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="RAA")
    llm.gate.close()
    submit_judgement(page, "Focus kept", CONTENT, AGENTS)
    llm.gate.wait_parked(("model-a", 1), ("model-b", 1), ("model-c", 1))
    expect(box(page, 2)).to_have_attribute("data-state", "thinking")
    page.mouse.move(0, 0)  # no hover: only the keyboard opens a record

    tab_to(page, "agent-box-2")
    record = page.locator("#agent-box-2-record")
    expect(box(page, 2)).to_be_focused()
    expect(record).to_be_visible()
    expect(record.locator("tbody tr")).to_have_text(["No decision yet."])

    # Another box's decision arrives: the whole panel is re-sent.
    llm.gate.allow("model-a", 1)
    expect(box(page, 1)).to_have_attribute("data-state", "pending")
    expect(box(page, 2)).to_be_focused()
    expect(record).to_be_visible()

    # The focused box's own decision arrives: its state and record change under the focus.
    llm.gate.allow("model-b", 1)
    expect(box(page, 2)).to_have_attribute("data-state", "pending")
    expect(record.locator("tbody tr")).to_have_text(
        [re.compile(r"1\s*Reject\s*model-b says reject in round 1")]
    )
    expect(box(page, 2)).to_be_focused()
    expect(record).to_be_visible()

    # To the end of the judgement, and the keyboard order still works from there.
    llm.gate.open()
    expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
    expect(box(page, 2)).to_be_focused()
    expect(record.locator("tbody tr")).to_have_count(3)
    expect(record).to_be_visible()
    page.keyboard.press("Tab")
    expect(box(page, 3)).to_be_focused()
    expect(record).to_be_hidden()
