"""The vote arithmetic, in integer tenths so no float comparison can drift.

An agent votes in three rounds; its score is the weighted sum of its approvals with
weights 0.1, 0.4 and 0.5. The agent approves when the score reaches 0.5. The panel
approves when at least two of the three agents approve.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

ROUND_WEIGHTS_TENTHS = (1, 4, 5)
ROUNDS = len(ROUND_WEIGHTS_TENTHS)
APPROVE_THRESHOLD_TENTHS = 5
PANEL_SIZE = 3
MAJORITY = 2


class Vote(StrEnum):
    APPROVE = "approve"
    REJECT = "reject"


class Outcome(StrEnum):
    """Where an agent stands after some rounds: its final decision or still open."""

    APPROVE = "approve"
    REJECT = "reject"
    OPEN = "open"


def _check_votes(votes: Sequence[Vote | str]) -> list[Vote]:
    if len(votes) > ROUNDS:
        raise ValueError(f"an agent votes in at most {ROUNDS} rounds, got {len(votes)} votes")
    return [Vote(vote) for vote in votes]


def score_tenths(votes: Sequence[Vote | str]) -> int:
    """Weighted approvals so far, in tenths (0..10)."""
    checked = _check_votes(votes)
    return sum(
        weight
        for weight, vote in zip(ROUND_WEIGHTS_TENTHS, checked, strict=False)
        if vote is Vote.APPROVE
    )


def agent_outcome(votes: Sequence[Vote | str]) -> Outcome:
    """Fixed approve, fixed reject, or open, given the votes of the rounds so far.

    Fixed means no vote in the remaining rounds can change the final decision.
    """
    checked = _check_votes(votes)
    lowest = score_tenths(checked)
    highest = lowest + sum(ROUND_WEIGHTS_TENTHS[len(checked) :])
    if lowest >= APPROVE_THRESHOLD_TENTHS:
        return Outcome.APPROVE
    if highest < APPROVE_THRESHOLD_TENTHS:
        return Outcome.REJECT
    return Outcome.OPEN


def final_vote(votes: Sequence[Vote | str]) -> Vote:
    """An agent's final decision after all three rounds."""
    if len(votes) != ROUNDS:
        raise ValueError(f"a final decision needs {ROUNDS} votes, got {len(votes)}")
    return Vote.APPROVE if score_tenths(votes) >= APPROVE_THRESHOLD_TENTHS else Vote.REJECT


def panel_decision(final_votes: Sequence[Vote | str]) -> Vote:
    """The overall decision: approve when at least two of three agents approve."""
    if len(final_votes) != PANEL_SIZE:
        raise ValueError(f"the panel has {PANEL_SIZE} agents, got {len(final_votes)} votes")
    approvals = sum(1 for vote in final_votes if Vote(vote) is Vote.APPROVE)
    return Vote.APPROVE if approvals >= MAJORITY else Vote.REJECT


def round_under_way(votes_per_agent: Sequence[int]) -> int:
    """The round a judgement is in, given how many votes each agent has cast.

    Rounds run in lockstep, so it is the first round some agent has not voted in yet; once
    every agent has voted three times, the last round.
    """
    decided_everywhere = min(votes_per_agent, default=0)
    return min(decided_everywhere + 1, ROUNDS)


@dataclass(frozen=True)
class VoteChange:
    """How an agent's vote in one round relates to the round before.

    `changed`: the vote differs from the agent's own previous vote (False in round 1).
    `with_majority`: None in round 1 and when the two other agents disagreed in the
    previous round; else whether the vote now equals the vote both of them gave.
    """

    changed: bool
    with_majority: bool | None


def vote_changes(votes_per_agent: Sequence[Sequence[Vote | str]]) -> list[list[VoteChange]]:
    """For each agent (in panel order) and each round it voted in, its VoteChange.

    Agents may have voted in different numbers of rounds (a judgement under way); a round
    is compared with the previous round's votes of the others that exist.
    """
    checked = [_check_votes(votes) for votes in votes_per_agent]
    changes = []
    for index, votes in enumerate(checked):
        others = [other for position, other in enumerate(checked) if position != index]
        agent_changes = []
        for round_index, vote in enumerate(votes):
            if round_index == 0:
                agent_changes.append(VoteChange(changed=False, with_majority=None))
                continue
            earlier = [other[round_index - 1] for other in others if len(other) >= round_index]
            changed = vote is not votes[round_index - 1]
            if len(earlier) == len(others) and len(set(earlier)) == 1:
                agent_changes.append(VoteChange(changed, with_majority=vote is earlier[0]))
            else:
                agent_changes.append(VoteChange(changed, with_majority=None))
        changes.append(agent_changes)
    return changes


def tenths_as_float(tenths: int) -> float:
    """For display and JSON only; decisions never compare floats."""
    return tenths / 10
