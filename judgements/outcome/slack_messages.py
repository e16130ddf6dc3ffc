"""What a held verdict looks like in Slack (Block Kit): the title, the panel, the verdict
it gave, why it is held, each agent's final decision and reason, a link to the page, and
the buttons (Confirm, Override…) while it waits; once a person decided, who decided what
and when in their place. The override's modal is here too.

Everything a user or a model wrote is escaped for Slack's mrkdwn (`&`, `<`, `>`: no link,
mention or broadcast can be smuggled in) and cut to the length Slack allows.
"""

import json
from typing import TypedDict

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    PlainTextInputElement,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

from judgements.models import DECISION_OF_STATUS, Decision, Judgement, Status
from judgements.models.magi_settings import magi_settings

CONFIRM = "magi_confirm"
OVERRIDE = "magi_override"
OVERRIDE_VIEW = "magi_override_view"
REASON_BLOCK = "reason"
REVIEW_BLOCK = "magi_review"
# Slack's limits: a header's text, a section's text, a modal's input.
HEADER_MAX_CHARS = 150
SECTION_MAX_CHARS = 3000
INPUT_MAX_CHARS = 3000
AGENT_REASON_MAX_CHARS = 600


class Message(TypedDict):
    """A message's fallback text (notifications) and its blocks."""

    text: str
    blocks: list[Block]


class OverrideTarget(TypedDict):
    """What the modal carries back (its private_metadata): the judgement, and the message
    the click came from."""

    judgement: int
    channel: str
    ts: str


def escaped(text: str) -> str:
    """Untrusted text as Slack's mrkdwn shows it literally: its three control characters
    escaped, as Slack documents."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain(text: str, limit: int = SECTION_MAX_CHARS) -> PlainTextObject:
    return PlainTextObject(text=cut(text, limit), emoji=False)


def mrkdwn(text: str) -> MarkdownTextObject:
    """Verbatim: Slack turns no bare URL, channel or user name in it into a link."""
    return MarkdownTextObject(text=cut(text, SECTION_MAX_CHARS), verbatim=True)


def link(judgement: Judgement) -> str:
    return f"{magi_settings.MAGI_SITE_URL}{judgement.get_absolute_url()}"


def status_label(status: str) -> str:
    return Status(status).label


def other_decision(judgement: Judgement) -> Decision:
    """What an override from Slack puts in force: the other side of the panel's verdict."""
    panel = DECISION_OF_STATUS[judgement.status]
    return Decision.REJECT if panel == Decision.APPROVE else Decision.APPROVE


def decided_status(decision: str) -> Status:
    return Status.APPROVED if decision == Decision.APPROVE else Status.REJECTED


def why_held(judgement: Judgement) -> list[str]:
    """The mark's reasons, and for a later level of an escalation story, what each level
    before it decided and why it did not keep its verdict."""
    lines = [escaped(reason) for reason in judgement.contest_reasons]
    if not judgement.contest_reasons:
        lines.append("Its trust is not measured, and its panel holds such verdicts.")
    for level in judgement.story():
        if level.pk == judgement.pk or level.level >= judgement.level:
            continue
        panel = escaped(str(level.panel)) if level.panel else "a panel"
        said = "; ".join(escaped(r) for r in level.contest_reasons) or "no reason recorded"
        lines.append(
            f"Level {level.level} ({panel}) said {status_label(level.status)} and escalated: {said}"
        )
    return lines


def agent_lines(judgement: Judgement) -> list[Block]:
    blocks: list[Block] = []
    for agent in judgement.agents.all():
        decisions = agent.ordered_decisions()
        if not decisions:
            continue
        last = decisions[-1]
        decision = Decision(agent.final_decision or last.decision).label
        reason = escaped(cut(last.reason, AGENT_REASON_MAX_CHARS))
        blocks.append(SectionBlock(text=mrkdwn(f"*{escaped(agent.name)}*: {decision}. {reason}")))
    return blocks


def buttons(judgement: Judgement) -> Block:
    panel = status_label(judgement.status)
    confirm = ButtonElement(
        text=plain("Confirm"),
        action_id=CONFIRM,
        value=str(judgement.pk),
        style="primary",
        confirm=ConfirmObject(
            title=plain("Confirm the verdict?", 100),
            text=plain(f"The panel's verdict, {panel}, goes into force, in your name."),
            confirm=plain("Confirm", 30),
            deny=plain("Cancel", 30),
        ),
    )
    override = ButtonElement(
        text=plain("Override…"), action_id=OVERRIDE, value=str(judgement.pk), style="danger"
    )
    return ActionsBlock(block_id=REVIEW_BLOCK, elements=[confirm, override])


def review_line(judgement: Judgement) -> str:
    """Who decided what and when, as the message shows it once a person reviewed."""
    override = judgement.override_or_none
    if override is not None:
        return (
            f"*Overridden* by {escaped(override.by.get_username())} at "
            f"{override.at:%Y-%m-%d %H:%M} UTC: {status_label(override.verdict)} is in force "
            f"(the panel said {status_label(override.panel_status)}). Reason: "
            f"{escaped(cut(override.reason, 1000))}"
        )
    confirmation = judgement.confirmation_or_none
    if confirmation is not None:
        return (
            f"*Confirmed* by {escaped(confirmation.by.get_username())} at "
            f"{confirmation.at:%Y-%m-%d %H:%M} UTC: {status_label(confirmation.panel_status)} "
            "is in force."
        )
    return f"No longer waits for a review: {status_label(judgement.verdict)} is in force."


def held_message(judgement: Judgement) -> tuple[Message, bool]:
    """The message for a held verdict as it stands now, and whether it shows the review
    (True: no buttons any more)."""
    title = cut(f"Held for review: {judgement.title}", HEADER_MAX_CHARS)
    panel = escaped(str(judgement.panel)) if judgement.panel else "(no saved panel)"
    why = "\n".join(f"• {reason}" for reason in why_held(judgement))
    blocks: list[Block] = [
        HeaderBlock(text=plain(title, HEADER_MAX_CHARS)),
        SectionBlock(
            fields=[
                mrkdwn(f"*Panel*\n{panel}"),
                mrkdwn(f"*The panel's verdict*\n{status_label(judgement.status)}"),
            ]
        ),
        SectionBlock(text=mrkdwn(f"*Why it is held*\n{why}")),
        *agent_lines(judgement),
        ContextBlock(
            elements=[mrkdwn(f"<{link(judgement)}|Open judgement {judgement.pk} in MAGI>")]
        ),
    ]
    waiting = judgement.is_held
    if waiting:
        blocks.append(buttons(judgement))
    else:
        blocks.append(SectionBlock(block_id=REVIEW_BLOCK, text=mrkdwn(review_line(judgement))))
    return {"text": escaped(title), "blocks": blocks}, not waiting


def override_view(judgement: Judgement, target: OverrideTarget) -> View:
    """The modal the Override… button opens: what the override puts in force, and the
    reason the audit keeps."""
    panel = status_label(judgement.status)
    after = status_label(decided_status(other_decision(judgement)))
    title = escaped(cut(judgement.title, 200))
    return View(
        type="modal",
        callback_id=OVERRIDE_VIEW,
        private_metadata=json.dumps(target),
        title=plain("Override the verdict", 24),
        submit=plain("Override", 24),
        close=plain("Cancel", 24),
        blocks=[
            SectionBlock(
                text=mrkdwn(
                    f"The panel said *{panel}* on “{title}”. Your override puts *{after}* in "
                    "force, in your name."
                )
            ),
            InputBlock(
                block_id=REASON_BLOCK,
                label=plain("Why", 2000),
                element=PlainTextInputElement(
                    action_id=REASON_BLOCK, multiline=True, max_length=INPUT_MAX_CHARS
                ),
            ),
        ],
    )
