"""The signs of doubt in a panel's record, each read from the stored votes, reasons and
attempts alone: what `contested.assess` (judgements/core/contested.py) finds, one reader a
signal, each naming what it saw in words. Pure: no Django, no calls.

The record (an agent's answers in round order) and what a reader finds are the types here;
which of the signals contest a verdict is contested.py's to say.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from judgements.core import answer_checks, own_criterion, rules


class Signal(StrEnum):
    SPLIT = "split"
    LATE_CHANGE = "late_change"
    CONFORMED = "conformed"
    COPIED = "copied"
    STATED_ABSENCE = "stated_absence"
    RECHECKED = "rechecked"
    RETRIED = "retried"
    OFF_CRITERION_CHANGE = "off_criterion_change"
    SECOND_OPINION = "second_opinion"
    INJECTION = "injection"


@dataclass(frozen=True)
class Answer:
    """One agent's stored answer in one round, and how it was obtained."""

    round: int
    decision: str
    reason: str
    missing: tuple[str, ...] = ()
    attempts: int = 1  # calls that failed or gave an invalid reply, plus this one
    rechecked: bool = False  # a first answer failed a check and was asked again


@dataclass(frozen=True)
class AgentRecord:
    name: str
    answers: tuple[Answer, ...]  # in round order
    criteria: str = ""  # its criterion ("": not known, and no criterion-reading signal)

    @property
    def votes(self) -> list[str]:
        return [answer.decision for answer in self.answers]


@dataclass(frozen=True)
class Finding:
    signal: str  # a Signal, or a registered check's signal
    words: str
    agent: str | None = None
    round: int | None = None


def finals(agents: Sequence[AgentRecord]) -> list[str]:
    return [rules.final_vote(agent.votes).value for agent in agents]


def split(agents: Sequence[AgentRecord]) -> list[Finding]:
    decisions = finals(agents)
    if len(set(decisions)) < 2:
        return []
    majority = rules.panel_decision(decisions).value
    lone, dissent = next((a, d) for a, d in zip(agents, decisions, strict=True) if d != majority)
    return [
        Finding(
            Signal.SPLIT,
            f"The panel split 2-1: {lone.name} decided {verb(dissent)} "
            f"against the others' {verb(majority)}.",
            agent=lone.name,
        )
    ]


def late_changes(agents: Sequence[AgentRecord]) -> list[Finding]:
    found = []
    for agent, final in zip(agents, finals(agents), strict=True):
        votes = agent.votes
        if votes[0] == final:
            continue
        # The round from which the agent voted its final decision to the end.
        settled = next(
            r for r in range(2, len(votes) + 1) if all(v == final for v in votes[r - 1 :])
        )
        found.append(
            Finding(
                Signal.LATE_CHANGE,
                f"{agent.name}'s {verb(final)} came from a round-{settled} change "
                f"(round 1: {verb(votes[0])}).",
                agent=agent.name,
                round=settled,
            )
        )
    return found


def conformed(agents: Sequence[AgentRecord]) -> list[Finding]:
    found = []
    changes = rules.vote_changes([agent.votes for agent in agents])
    for agent, agent_changes in zip(agents, changes, strict=True):
        for answer, change in zip(agent.answers, agent_changes, strict=True):
            if change.changed and change.with_majority:
                found.append(
                    Finding(
                        Signal.CONFORMED,
                        f"{agent.name} changed to {verb(answer.decision)} in round "
                        f"{answer.round}, the vote both others gave the round before.",
                        agent=agent.name,
                        round=answer.round,
                    )
                )
    return found


def copied(agents: Sequence[AgentRecord]) -> list[Finding]:
    earlier = [
        answer_checks.EarlierReason(agent.name, answer.round, answer.reason)
        for agent in agents
        for answer in agent.answers
    ]
    found = []
    for agent in agents:
        for answer in agent.answers:
            source = answer_checks.copied_from(agent.name, answer.round, answer.reason, earlier)
            if source is not None:
                found.append(
                    Finding(
                        Signal.COPIED,
                        f"{agent.name}'s round-{answer.round} reason repeats word for word "
                        f"{source.agent_name}'s round-{source.round} reason, about "
                        f"{source.agent_name}'s criterion.",
                        agent=agent.name,
                        round=answer.round,
                    )
                )
    return found


def stated_absences(content: str, agents: Sequence[AgentRecord]) -> list[Finding]:
    found = []
    for agent in agents:
        for answer in agent.answers:
            stated = answer_checks.refuted_absences(answer.decision, answer.missing, content)
            if stated:
                items = ", ".join(f'"{item}"' for item in stated)
                found.append(
                    Finding(
                        Signal.STATED_ABSENCE,
                        f"{agent.name} rejected in round {answer.round} for lack of {items}, "
                        "which the content states.",
                        agent=agent.name,
                        round=answer.round,
                    )
                )
    return found


def rechecked(agents: Sequence[AgentRecord]) -> list[Finding]:
    return [
        Finding(
            Signal.RECHECKED,
            f"{agent.name}'s round-{answer.round} answer failed a check and was asked again.",
            agent=agent.name,
            round=answer.round,
        )
        for agent in agents
        for answer in agent.answers
        if answer.rechecked
    ]


def retried(agents: Sequence[AgentRecord]) -> list[Finding]:
    return [
        Finding(
            Signal.RETRIED,
            f"{agent.name}'s round-{answer.round} answer needed {answer.attempts} attempts.",
            agent=agent.name,
            round=answer.round,
        )
        for agent in agents
        for answer in agent.answers
        if answer.attempts > 1
    ]


def off_criterion_changes(agents: Sequence[AgentRecord]) -> list[Finding]:
    """A vote turned after two rounds of the same vote, with a reason not about the
    agent's own criterion (needs every agent's criterion)."""
    criteria = [agent.criteria for agent in agents]
    reasons = [[answer.reason for answer in agent.answers] for agent in agents]
    return [
        Finding(
            Signal.OFF_CRITERION_CHANGE,
            f"{agent.name} changed to {verb(agent.votes[at - 1])} in round {at} after "
            f"voting {verb(agent.votes[0])} before, with a reason not about its own criterion.",
            agent=agent.name,
            round=at,
        )
        for index, agent in enumerate(agents)
        if all(criteria)
        for at in own_criterion.turned_off_criterion(agent.votes, reasons[index], index, criteria)
    ]


def verb(decision: str) -> str:
    return "approve" if decision == rules.Vote.APPROVE else "reject"
