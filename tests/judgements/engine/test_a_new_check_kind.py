"""A new kind of check is one class, registered once (judgements/core/checks.py): this
module adds a fourth kind, a refusal screen, and sees it asked by the engine, stored with
its finding, counted in the contested mark and listed on the judgement's page, with
nothing else in MAGI changed for it."""

import json

import pytest
from asgiref.sync import sync_to_async

from judgements.core import checks
from judgements.models import Judgement, JudgementCheck, Trust

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "Would a careful assistant refuse to help with the text below?"


class RefusalScreen(checks.Check):
    """Asks the check model whether it would refuse to help with the content; a "reject"
    is the `refused` signal."""

    kind = "refusal"
    label = "Refusal screen"
    signal = "refused"
    setting = "MAGI_REFUSAL_SCREEN"

    def question(self, subject: checks.Subject) -> checks.Question:
        text = f'{MARKER} Answer {{"decision": "approve" or "reject"}}.\n{subject.content}'
        return checks.Question([{"role": "user", "content": text}], read_refusal)

    def doubt(self, found: checks.Found, verdict: str | None) -> str | None:
        return "The check model would refuse to help with this." if found.flagged else None

    def shown(self, found: checks.Found, decision: str | None) -> tuple[str, bool] | None:
        if found.flagged is None:
            return None
        return ("would refuse", True) if found.flagged else ("would help", False)


def read_refusal(reply: checks.Reply) -> checks.Found:
    try:
        decision = json.loads(reply.text)["decision"]
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a decision: {reply.text!r}") from exc
    return checks.Found(decision=decision, flagged=decision == "reject")


@pytest.fixture
def refusal_screen(settings):
    checks.register(RefusalScreen)
    settings.MAGI_REFUSAL_SCREEN = True
    yield
    checks.unregister(RefusalScreen.kind)


async def test_a_fourth_kind_is_asked_stored_counted_and_shown(
    fake_llm, make_judgement, runner, refusal_screen, settings, user, client
):
    settings.MAGI_CHECK_MODEL = "model-c"
    # The check model refuses; as an agent it approves.
    fake_llm.script("model-c", votes_when={MARKER: "RRR"})
    judgement = await sync_to_async(make_judgement)(creator=user)
    assert judgement.checks_asked == ["refusal"]
    assert await runner.run_judgement(judgement.pk)
    judgement = await Judgement.objects.aget(pk=judgement.pk)

    stored = [c async for c in JudgementCheck.objects.filter(judgement=judgement)]
    assert [(c.kind, c.model, c.decision, c.steered, c.ok) for c in stored] == [
        ("refusal", "model-c", "reject", True, True)
    ]
    assert MARKER in stored[0].request["messages"][0]["content"]
    assert str(stored[0]) == "Refusal screen, attempt 1: done"

    # The verdict stands; its mark says why a person should look.
    assert judgement.status == "approved"
    assert judgement.contest_signals == ["refused"]
    assert judgement.trust == Trust.CONTESTED
    assert judgement.contest_reasons == ["The check model would refuse to help with this."]

    await sync_to_async(client.force_login)(user)
    page = await sync_to_async(client.get)(judgement.get_absolute_url())
    assert (
        '<span class="check-name">Refusal screen:</span> would refuse '
        "<strong>(a sign of doubt)</strong>"
    ) in page.content.decode()


async def test_without_it_registered_nothing_asks_it(fake_llm, make_judgement, runner, settings):
    settings.MAGI_REFUSAL_SCREEN = True
    judgement = await sync_to_async(make_judgement)()
    assert judgement.checks_asked == []
    assert await runner.run_judgement(judgement.pk)
    assert len(fake_llm.requests) == 9
