"""The rows the engine writes while judging (judgements/engine/writes.py): a decision and
a check only by the worker that holds the judgement's lease, each with the attempt that
made it; a failed attempt whoever asked; a decision stored twice keeps the first."""

import pytest

from judgements.engine import lifecycle, writes
from judgements.engine.lease import LeaseLost
from judgements.models import (
    AttemptOutcome,
    CheckKind,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    RoundDecision,
)
from tests.support.audit_history import result, route
from tests.support.states import bring

pytestmark = pytest.mark.django_db


def claimed(make_judgement, worker_id: str = "w1") -> Judgement:
    judgement = make_judgement()
    assert lifecycle.claim(worker_id, Judgement.objects.filter(pk=judgement.pk), 1)
    return judgement


def test_a_decision_is_stored_with_its_attempt_by_the_lease_holder(make_judgement):
    judgement = claimed(make_judgement)
    agent = judgement.agents.order_by("position")[0]
    stored = writes.store_decision(agent, 1, route(), result("approve", 1), "w1")
    assert (stored.agent, stored.round, stored.decision) == (agent, 1, "approve")
    attempt = LLMAttempt.objects.get(agent=agent)
    assert (attempt.round, attempt.outcome, attempt.model) == (1, AttemptOutcome.OK, "model-a")


def test_a_worker_without_the_lease_stores_no_decision_nor_its_attempt(make_judgement):
    judgement = claimed(make_judgement)
    agent = judgement.agents.order_by("position")[0]
    with pytest.raises(LeaseLost):
        writes.store_decision(agent, 1, route(), result("approve", 1), "w2")
    assert not RoundDecision.objects.filter(agent=agent).exists()
    assert not LLMAttempt.objects.filter(agent=agent).exists()


def test_a_decision_stored_again_keeps_the_first(make_judgement):
    judgement = claimed(make_judgement)
    agent = judgement.agents.order_by("position")[0]
    writes.store_decision(agent, 1, route(), result("approve", 1), "w1")
    again = writes.store_decision(agent, 1, route(), result("reject", 1), "w1")
    assert again.decision == "approve"
    assert list(RoundDecision.objects.filter(agent=agent).values_list("decision", flat=True)) == [
        "approve"
    ]


def test_failed_and_rechecked_attempts_are_kept_as_such(make_judgement):
    judgement = claimed(make_judgement)
    agent = judgement.agents.order_by("position")[0]
    failed = result("approve", 1).attempt
    failed.error = "timed out"
    writes.store_failed_attempt(agent, 1, route(), failed)
    writes.store_rechecked_attempt(agent, 1, route(), result("reject", 1).attempt)
    outcomes = LLMAttempt.objects.filter(agent=agent).order_by("pk")
    assert [(a.outcome, a.error) for a in outcomes] == [
        (AttemptOutcome.FAILED, "timed out"),
        (AttemptOutcome.RECHECKED, ""),
    ]


def test_a_check_is_stored_with_its_finding_by_the_lease_holder_only(make_judgement):
    judgement = claimed(make_judgement)
    entry = result("approve", 1).attempt
    with pytest.raises(LeaseLost):
        writes.store_check(judgement.pk, CheckKind.SECOND_OPINION, None, route(), entry, "w2")
    assert not JudgementCheck.objects.filter(judgement=judgement).exists()
    writes.store_check(
        judgement.pk,
        CheckKind.SECOND_OPINION,
        None,
        route(),
        entry,
        "w1",
        decision="approve",
        p_approve=0.8,
    )
    check = JudgementCheck.objects.get(judgement=judgement)
    assert (check.kind, check.decision, check.p_approve, check.error) == (
        CheckKind.SECOND_OPINION,
        "approve",
        0.8,
        "",
    )


def test_the_lease_check_answers_for_the_holder_of_a_judging_judgement_only(make_judgement):
    judgement = claimed(make_judgement)
    other = claimed(make_judgement, "w2")
    assert writes.locked_if_held(judgement.pk, "w1")
    assert not writes.locked_if_held(judgement.pk, "w2")
    assert not writes.locked_if_held(other.pk, "w1")
    # Held by w1 still, but no longer judging: its lease went with its status.
    bring(Judgement.objects.filter(pk=judgement.pk), "approved")
    assert not writes.locked_if_held(judgement.pk, "w1")
