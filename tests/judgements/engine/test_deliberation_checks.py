"""The engine's checks of an answer (judgements/core/answer_checks.py) through the real SDK and
the suite's fake LLM server: an answer calling missing what the content states, or
copying a peer's reason, is asked once more; what persists marks the judgement contested."""

import pytest
from asgiref.sync import sync_to_async

from judgements.models import AttemptOutcome, Judgement, LLMAttempt, RoundDecision, Status
from tests.support.llm_server import RECHECK_MARKER

pytestmark = pytest.mark.django_db(transaction=True)

CONTENT = "Expense claim: taxi 38 EUR for the Bosch kick-off. Receipt attached."


@sync_to_async
def reload(judgement_id: int) -> Judgement:
    return Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement_id)


@sync_to_async
def attempts_of(judgement_id: int, model: str) -> list[tuple[int, int, str]]:
    return list(
        LLMAttempt.objects.filter(agent__judgement_id=judgement_id, model=model)
        .order_by("round", "attempt")
        .values_list("round", "attempt", "outcome")
    )


async def test_a_reject_calling_missing_what_the_content_states_is_asked_again(
    make_judgement, fake_llm, runner
):
    fake_llm.script("model-b", votes="RRR", missing=["receipt"], recheck_votes="AAA")
    judgement = await sync_to_async(make_judgement)(content=CONTENT)
    await runner.run_judgement(judgement.pk)
    judgement = await reload(judgement.pk)
    assert judgement.status == Status.APPROVED
    # Round 1: the first answer kept for the audit, the second one the vote; later rounds
    # see "missing" again each time and are asked again each time.
    assert await attempts_of(judgement.pk, "model-b") == [
        (1, 1, AttemptOutcome.RECHECKED),
        (1, 2, AttemptOutcome.OK),
        (2, 1, AttemptOutcome.RECHECKED),
        (2, 2, AttemptOutcome.OK),
        (3, 1, AttemptOutcome.RECHECKED),
        (3, 2, AttemptOutcome.OK),
    ]
    note = fake_llm.requests_for("model-b", 1)[1].body["messages"][-1]["content"]
    assert note.startswith(RECHECK_MARKER)
    assert 'your answer calls missing "receipt", but the content above does state it' in note
    stored = await sync_to_async(RoundDecision.objects.get)(agent__name="Balthasar", round=1)
    assert (stored.decision, stored.missing) == ("approve", [])
    # The checks passed the second time: a recheck is reported but not counted.
    assert judgement.contested is False
    assert judgement.contest_signals == ["rechecked"]


async def test_a_stated_absence_that_persists_marks_the_judgement_contested(
    make_judgement, fake_llm, runner
):
    fake_llm.script("model-b", votes="RRR", missing=["receipt"], recheck_keeps=True)
    judgement = await sync_to_async(make_judgement)(content=CONTENT)
    await runner.run_judgement(judgement.pk)
    judgement = await reload(judgement.pk)
    assert judgement.status == Status.APPROVED  # 2 of 3: the vote is the rule's
    assert judgement.contested is True
    assert judgement.contest_signals == ["split", "stated_absence", "rechecked"]
    assert (
        'Balthasar rejected in round 1 for lack of "receipt", which the content states.'
        in judgement.contest_reasons
    )


async def test_a_claim_the_content_does_not_state_is_not_asked_again(
    make_judgement, fake_llm, runner
):
    fake_llm.script("model-b", votes="RRR", missing=["itemised hotel invoice"])
    judgement = await sync_to_async(make_judgement)(content=CONTENT)
    await runner.run_judgement(judgement.pk)
    assert [outcome for *_, outcome in await attempts_of(judgement.pk, "model-b")] == [
        AttemptOutcome.OK
    ] * 3
    judgement = await reload(judgement.pk)
    assert judgement.contest_signals == ["split"]


async def test_an_approve_listing_something_missing_is_not_asked_again(
    make_judgement, fake_llm, runner
):
    fake_llm.script("model-b", votes="AAA", missing=["receipt"])
    judgement = await sync_to_async(make_judgement)(content=CONTENT)
    await runner.run_judgement(judgement.pk)
    assert len(await attempts_of(judgement.pk, "model-b")) == 3
    judgement = await reload(judgement.pk)
    assert judgement.contested is False
    assert judgement.contest_signals == []


async def test_a_copied_peer_reason_is_asked_again_and_counted_when_it_persists(
    make_judgement, fake_llm, runner
):
    fake_llm.script("model-a", votes="AAA", reason="The receipt is attached.")
    fake_llm.script(
        "model-c", votes="AAA", reasons={2: "The receipt is attached."}, recheck_keeps=True
    )
    judgement = await sync_to_async(make_judgement)(content=CONTENT)
    await runner.run_judgement(judgement.pk)
    assert await attempts_of(judgement.pk, "model-c") == [
        (1, 1, AttemptOutcome.OK),
        (2, 1, AttemptOutcome.RECHECKED),
        (2, 2, AttemptOutcome.OK),
        (3, 1, AttemptOutcome.OK),
    ]
    note = fake_llm.requests_for("model-c", 2)[1].body["messages"][-1]["content"]
    assert "your reason repeats word for word the reason Melchior gave in round 1" in note
    judgement = await reload(judgement.pk)
    assert judgement.status == Status.APPROVED
    assert judgement.contested is True
    assert judgement.contest_reasons == [
        "Casper's round-2 reason repeats word for word Melchior's round-1 reason, about "
        "Melchior's criterion."
    ]


async def test_the_recheck_shows_the_agent_its_answer_and_nothing_else_changes(
    make_judgement, fake_llm, runner
):
    fake_llm.script("model-b", votes="RRR", missing=["receipt"], recheck_votes="RRR")
    judgement = await sync_to_async(make_judgement)(content=CONTENT)
    await runner.run_judgement(judgement.pk)
    first, again = fake_llm.requests_for("model-b", 1)
    assert again.body["messages"][: len(first.body["messages"])] == first.body["messages"]
    assistant = again.body["messages"][len(first.body["messages"])]
    assert assistant["role"] == "assistant"
    assert '"missing": ["receipt"]' in assistant["content"]
    judgement = await reload(judgement.pk)
    assert judgement.status == Status.APPROVED
    assert judgement.contest_signals == ["split", "rechecked"]
