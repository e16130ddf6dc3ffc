"""A panel's verdict as the answers carry it, for a judgement at the top of its answer and
for each level of an escalation story beside it (outcome/story_answers.py): each agent's
rounds, and the mark in words. Pydantic models like the others (outcome/answers.py)."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from judgements import models
from judgements.core import rules
from judgements.models import Decision, Trust

# A probability, or null when unknown.
Probability = Annotated[float | None, Field(ge=0, le=1)]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Round(Answer):
    round: Annotated[int, Field(ge=1, le=rules.ROUNDS)]
    decision: Decision
    reason: str
    changed: bool = Field(
        description="The decision differs from the agent's own in the round before "
        "(false in round 1)."
    )
    with_majority: bool | None = Field(
        description="Whether the decision is the one both other agents gave in the round "
        "before; null in round 1 and when those two disagreed."
    )
    p_approve: Probability = Field(
        description="The agent's own confidence: the probability of approve against reject "
        "at its decision, from the token log-probabilities; null when the provider gave none."
    )


class AgentResult(Answer):
    name: str
    model: str
    final_decision: Decision | None
    score: Annotated[float, Field(ge=0, le=1)]
    rounds: Annotated[list[Round], Field(max_length=rules.ROUNDS)]

    @classmethod
    def from_record(
        cls, agent: models.Agent, changes: dict[tuple[int, int], rules.VoteChange]
    ) -> "AgentResult":
        """`changes`: the judgement's vote changes (Judgement.vote_changes), which need the
        other agents' votes."""
        return cls(
            name=agent.name,
            model=agent.model,
            final_decision=agent.final_decision,
            score=rules.tenths_as_float(agent.score_tenths()),
            rounds=[
                Round(
                    round=d.round,
                    decision=d.decision,
                    reason=d.reason,
                    changed=changes[agent.pk, d.round].changed,
                    with_majority=changes[agent.pk, d.round].with_majority,
                    p_approve=d.p_approve,
                )
                for d in agent.ordered_decisions()
            ],
        )


def agents_of(judgement: models.Judgement) -> list[AgentResult]:
    """The agents that ran, each with its rounds, read from a judgement loaded with
    Judgement.objects.with_results()."""
    changes = judgement.vote_changes()
    return [AgentResult.from_record(agent, changes) for agent in judgement.agents.all()]


def trust_words(judgement: models.Judgement) -> str | None:
    """The mark in words, as every surface says it (None until decided): the answers,
    the page's Markdown export, the admin."""
    if judgement.trust is None:
        return None
    if judgement.trust == Trust.NOT_CONTESTED and judgement.certificate is not None:
        return f"Not contested. {judgement.certificate.describe()}"
    if judgement.trust == Trust.UNMEASURED:
        return (
            "Trust not measured for this panel: no certificate holds for these agents, so "
            "nobody knows how often a verdict like this is right."
        )
    return Trust(judgement.trust).label
