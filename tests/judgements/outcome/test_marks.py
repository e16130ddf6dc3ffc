"""What is stored beside a verdict (judgements/outcome/marks.py), read from a judgement's
stored record: its answers and attempts, its checks and its panel's certificate."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judgements.models import (
    AttemptOutcome,
    CheckKind,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    RoundDecision,
    Trust,
)
from judgements.outcome import marks
from tests.support.certificates import certificate_for

pytestmark = pytest.mark.django_db

AUDIT = {"model": "m", "provider": "p", "request": {}}


def decided(judgement: Judgement, votes: list[str], p_approve: float = 0.9) -> Judgement:
    """Each agent's three answers, by position: "A" approve, "R" reject."""
    for agent, agent_votes in zip(judgement.agents.order_by("position"), votes, strict=True):
        for round_number, vote in enumerate(agent_votes, start=1):
            RoundDecision.objects.create(
                agent=agent,
                round=round_number,
                decision="approve" if vote == "A" else "reject",
                reason=f"{agent.name} in round {round_number}",
                p_approve=p_approve,
            )
    return Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement.pk)


def check(judgement: Judgement, kind: str, **finding: object) -> JudgementCheck:
    return JudgementCheck.objects.create(judgement=judgement, kind=kind, **AUDIT, **finding)


def test_a_unanimous_record_with_no_certificate_is_unmeasured(make_judgement):
    judgement = decided(make_judgement(), ["AAA", "AAA", "AAA"])
    fields = marks.outcome_fields(judgement, "approve")
    assert fields == {
        "contested": False,
        "contest_reasons": [],
        "contest_signals": [],
        "trust": Trust.UNMEASURED.value,
        "certificate": None,
        "answer_confidence": pytest.approx(0.9),
        "probe_confidence": None,
    }


def test_the_checks_found_are_signals_and_the_probes_a_confidence(make_judgement):
    judgement = decided(make_judgement(), ["AAA", "AAA", "AAA"])
    for agent in judgement.agents.all():
        check(judgement, CheckKind.PROBE, agent=agent, p_approve=0.8)
    check(judgement, CheckKind.SECOND_OPINION, decision="reject")
    check(judgement, CheckKind.SCREEN, steered=True)
    # A failed call found nothing.
    check(judgement, CheckKind.SCREEN, attempt=2, steered=False, error="timeout")
    found = {checked.kind: checked.found for checked in marks.checks_found(judgement)}
    assert found[CheckKind.SECOND_OPINION].decision == "reject"
    fields = marks.outcome_fields(judgement, "approve")
    assert fields["contest_signals"] == ["second_opinion", "injection"]
    assert fields["contested"] is True and fields["trust"] == Trust.CONTESTED.value
    assert fields["probe_confidence"] == pytest.approx(0.8)


def test_its_checks_are_read_once(make_judgement):
    judgement = decided(make_judgement(), ["AAA", "AAA", "AAA"])
    check(judgement, CheckKind.SECOND_OPINION, decision="approve")
    with CaptureQueriesContext(connection) as queries:
        marks.outcome_fields(judgement, "approve")
    reads = [q["sql"] for q in queries if '"judgements_judgementcheck"' in q["sql"]]
    assert len(reads) == 1, reads


def test_an_answer_asked_again_counts_its_attempts_and_says_so(make_judgement):
    judgement = decided(make_judgement(), ["AAA", "AAA", "AAA"])
    first = judgement.agents.order_by("position").first()
    assert first is not None
    for outcome in (AttemptOutcome.FAILED, AttemptOutcome.RECHECKED, AttemptOutcome.OK):
        LLMAttempt.objects.create(agent=first, round=2, attempt=1, outcome=outcome, **AUDIT)
    answer = marks.contest_record(judgement)[0].answers[1]
    assert (answer.round, answer.attempts, answer.rechecked) == (2, 2, True)
    assert set(marks.assess(judgement).signals) == {"rechecked", "retried"}


def test_the_certificate_in_force_is_its_panel_s_for_exactly_its_agents(
    make_judgement, make_panel, user
):
    panel = make_panel(owner=user)
    certificate = certificate_for(panel)
    started = make_judgement(creator=user, panel=panel.name, agents=None)
    judgement = decided(started, ["AAA", "AAA", "AAA"], p_approve=0.99)
    assert marks.certificate_in_force(judgement) == certificate
    fields = marks.outcome_fields(judgement, "approve")
    assert fields["certificate"] == certificate
    assert fields["trust"] == Trust.NOT_CONTESTED.value
    # The same panel's judgement with one agent changed: no certificate holds for it.
    agent = judgement.agents.order_by("position").first()
    assert agent is not None
    agent.criteria += " And more."
    agent.save()
    assert marks.certificate_in_force(Judgement.objects.get(pk=judgement.pk)) is None
    # Typed agents, no saved panel: nothing to look up.
    typed = decided(make_judgement(creator=user), ["AAA", "AAA", "AAA"])
    assert marks.certificate_in_force(typed) is None
