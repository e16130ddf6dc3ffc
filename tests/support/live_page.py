"""A judgement on the live page: its agents and content, and what its boxes show."""

import re

from playwright.sync_api import expect

from tests.support.live_site import (
    STATE_COLOURS,
    hue_name,
    lowest_contrast,
    theme_colour,
)

AGENTS = [
    ("Melchior", "model-a", "Approve only legal actions."),
    ("Balthasar", "model-b", "Approve only safe actions."),
    ("Casper", "model-c", "Approve only affordable actions."),
]


CONTENT = "I am going to travel to Japan next week."


def expect_box(page, number: int, state: str, *, thinking: bool = False) -> None:
    """The box is in `state`: its data-state, its class, its word and its colour; and its
    call is in flight (flashing, the word THINKING) or not."""
    agent = box(page, number)
    expect(agent).to_have_attribute("data-state", state)
    expect(agent).to_have_class(re.compile(rf"(^|\s)state-{state}(\s|$)"))
    expect(agent).to_have_attribute("data-thinking", "true" if thinking else "false")
    word = "THINKING" if thinking else WORDS.get(state, state.upper())
    expect(agent.locator(".agent-state")).to_have_text(word)
    if state in STATE_COLOURS:
        colour = theme_colour(page, STATE_COLOURS[state])
        expect(agent).to_have_css("border-top-color", colour)
        if state in HUES:
            assert hue_name(colour) == HUES[state], f"{state} is drawn in {colour}"
    worst = lowest_contrast(agent)
    assert worst["ratio"] >= 4.5, f"WCAG AA contrast in a {state} box: {worst}"


def expect_status(page, status: str) -> None:
    badge = page.locator("#judgement-status")
    expect(badge).to_have_attribute("data-status", status)
    expect(badge).to_have_text(status.capitalize())


HUES = {"pending": "yellow", "approve": "green", "reject": "red"}


# The word a box says for its state, where it differs from the state's name.
WORDS = {"pending": "OPEN"}


def box(page, number: int):
    return page.locator(f"#agent-box-{number}")
