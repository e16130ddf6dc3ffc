"""What is stored beside a panel's verdict when it is decided: the signals of doubt, the
confidences and the contested mark, read against the panel's certificate in force
(judgements/core/contested.py and core/confidence.py say what they mean; this reads the
judgement's stored record for them). Nothing here changes the verdict.

`outcome_fields` is what engine/lifecycle.py's `finish` writes with the verdict, in the
same transaction; the others are its parts, which the quality benches read too.
"""

from typing import TypedDict

from judgements.core import confidence
from judgements.core import contested as marks
from judgements.core.checks import Found
from judgements.models import (
    AttemptOutcome,
    Certificate,
    CheckKind,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    agents_fingerprint,
)
from judgements.panels.escalation_chain import LevelRule


def contest_record(judgement: Judgement) -> list[marks.AgentRecord]:
    """The panel's record as contested.assess reads it: each agent's stored answers, with
    how many attempts each took and whether a check asked it again."""
    attempts: dict[tuple[int, int], list[str]] = {}
    for agent_id, round_number, outcome in LLMAttempt.objects.filter(
        agent__judgement=judgement
    ).values_list("agent_id", "round", "outcome"):
        attempts.setdefault((agent_id, round_number), []).append(outcome)
    records = []
    for agent in judgement.agents.all():
        answers = []
        for decision in agent.ordered_decisions():
            outcomes = attempts.get((agent.pk, decision.round), [])
            answers.append(
                marks.Answer(
                    round=decision.round,
                    decision=decision.decision,
                    reason=decision.reason,
                    missing=tuple(decision.missing),
                    attempts=max(1, sum(o != AttemptOutcome.RECHECKED for o in outcomes)),
                    rechecked=AttemptOutcome.RECHECKED in outcomes,
                )
            )
        records.append(marks.AgentRecord(agent.name, tuple(answers), agent.criteria))
    return records


def assess(judgement: Judgement, found: list[JudgementCheck] | None = None) -> marks.Contest:
    return marks.assess(
        judgement.content, contest_record(judgement), checks_found(judgement, found)
    )


def successful_checks(judgement: Judgement) -> list[JudgementCheck]:
    """Its checks' successful calls, in their order: what checks_found and confidences
    read, in one query when both are wanted (outcome_fields)."""
    found = JudgementCheck.objects.filter(judgement=judgement, error="")
    # Only what the findings are read from: not each call's request and answer.
    return list(found.only("kind", "agent", "decision", "steered", "p_approve"))


def checks_found(
    judgement: Judgement, found: list[JudgementCheck] | None = None
) -> list[marks.Checked]:
    """What its checks found (their successful calls, in order; a check that did not run
    or failed found nothing). `found`: successful_checks(), when already read."""
    if found is None:
        found = successful_checks(judgement)
    # successful_checks() reads only the calls without an error.
    return [marks.Checked(c.kind, Found(c.p_approve, c.decision, c.steered)) for c in found]


def confidences(
    judgement: Judgement, verdict: str, found: list[JudgementCheck] | None = None
) -> dict[str, float | None]:
    """The verdict's confidence per source (core/confidence.py): from each agent's last
    answer, and from each agent's round-1 probe. `found`: successful_checks(), when
    already read."""
    agents = list(judgement.agents.all())
    last = [
        decisions[-1].p_approve if (decisions := a.ordered_decisions()) else None for a in agents
    ]
    if found is None:
        probes = dict(
            JudgementCheck.objects.filter(
                judgement=judgement, kind=CheckKind.PROBE, error=""
            ).values_list("agent_id", "p_approve")
        )
    else:
        probes = {
            c.agent_id: c.p_approve
            for c in found
            if c.kind == CheckKind.PROBE and c.agent_id is not None
        }
    return {
        "answer": confidence.panel_confidence(last, verdict),
        "probe": confidence.panel_confidence([probes.get(a.pk) for a in agents], verdict),
    }


def certificate_in_force(judgement: Judgement) -> Certificate | None:
    """Its panel's newest certificate for exactly its agents asked with exactly its prompt
    variants, if the panel holds one."""
    if judgement.panel_id is None:
        return None
    agents = [{"model": a.model, "criteria": a.criteria} for a in judgement.agents.all()]
    return (
        Certificate.objects.filter(panel_id=judgement.panel_id)
        .in_force(agents_fingerprint(agents, judgement.prompt_variants or ()))
        .first()
    )


CASCADE_KEEPS_NOTHING = (
    "The cascade's certificate keeps no verdict at this level: the next level judges it."
)


class OutcomeFields(TypedDict):
    """What `finish` writes beside the verdict: Judgement's fields, by name."""

    contested: bool
    contest_reasons: list[str]
    contest_signals: list[str]
    trust: str
    certificate: Certificate | None
    answer_confidence: float | None
    probe_confidence: float | None


def outcome_fields(
    judgement: Judgement, verdict: str, cascade: LevelRule | None = None
) -> OutcomeFields:
    """What is stored beside the panel's verdict when it is decided: the signals, the
    confidences and the mark (judgements/core/contested.py), read against `cascade` when
    a cascade's certificate is in force for its level, else its panel's own. Nothing here
    changes the verdict."""
    # One read of its checks for both (it was two queries a judgement).
    found = successful_checks(judgement)
    contest = assess(judgement, found)
    confidences_of = confidences(judgement, verdict, found)
    if cascade is not None:
        certificate: Certificate | None = cascade.certificate
        rule = cascade.rule
    else:
        certificate = certificate_in_force(judgement)
        rule = None if certificate is None else certificate.the_rule
    mark = marks.mark(contest, confidences_of, rule)
    if cascade is not None and rule is None:
        mark = marks.Mark(marks.Trust.CONTESTED, (CASCADE_KEEPS_NOTHING,))
    return {
        "contested": mark.contested,
        "contest_reasons": list(mark.reasons),
        "contest_signals": contest.signals,
        "trust": mark.trust.value,
        "certificate": certificate,
        "answer_confidence": confidences_of["answer"],
        "probe_confidence": confidences_of["probe"],
    }
