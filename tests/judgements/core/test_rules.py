import itertools

import pytest

from judgements.core import rules
from judgements.core.rules import Outcome, Vote

A, R = Vote.APPROVE, Vote.REJECT
ALL_SEQUENCES = list(itertools.product([A, R], repeat=3))


def expected_score(votes) -> int:
    return sum(w for w, v in zip((1, 4, 5), votes, strict=False) if v is A)


@pytest.mark.parametrize("votes", ALL_SEQUENCES, ids=lambda v: "".join(x[0] for x in v))
def test_it_scores_every_sequence_in_tenths(votes):
    assert rules.score_tenths(votes) == expected_score(votes)
    assert rules.final_vote(votes) is (A if expected_score(votes) >= 5 else R)


@pytest.mark.parametrize(
    ("votes", "score", "final"),
    [
        ("AAA", 10, A),
        ("AAR", 5, A),  # approved after two rounds whatever round 3 says
        ("ARA", 6, A),
        ("ARR", 1, R),
        ("RAA", 9, A),
        ("RAR", 4, R),
        ("RRA", 5, A),  # round 3 alone reaches the threshold exactly
        ("RRR", 0, R),
    ],
)
def test_it_matches_the_spec_table(votes, score, final):
    sequence = [A if c == "A" else R for c in votes]
    assert rules.score_tenths(sequence) == score
    assert rules.final_vote(sequence) is final


@pytest.mark.parametrize("votes", ALL_SEQUENCES, ids=lambda v: "".join(x[0] for x in v))
def test_it_reports_the_outcome_after_each_round(votes):
    # After round 1 every agent is open.
    assert rules.agent_outcome(votes[:1]) is Outcome.OPEN
    # After round 2 only two approvals fix the outcome.
    after_two = rules.agent_outcome(votes[:2])
    assert after_two is (Outcome.APPROVE if votes[:2] == (A, A) else Outcome.OPEN)
    # After round 3 every agent is fixed, as its final vote.
    assert rules.agent_outcome(votes).value == rules.final_vote(votes).value


def test_it_reports_open_before_any_vote():
    assert rules.agent_outcome([]) is Outcome.OPEN
    assert rules.score_tenths([]) == 0


def test_it_accepts_plain_strings():
    assert rules.score_tenths(["approve", "reject", "approve"]) == 6


@pytest.mark.parametrize("finals", list(itertools.product([A, R], repeat=3)))
def test_it_needs_two_of_three_for_the_panel(finals):
    approvals = sum(1 for f in finals if f is A)
    assert rules.panel_decision(finals) is (A if approvals >= 2 else R)


@pytest.mark.parametrize("count", [0, 1, 2, 4])
def test_it_refuses_a_panel_that_is_not_three(count):
    with pytest.raises(ValueError, match="3 agents"):
        rules.panel_decision([A] * count)


def test_it_refuses_more_than_three_rounds():
    with pytest.raises(ValueError):
        rules.score_tenths([A, A, A, A])
    with pytest.raises(ValueError):
        rules.final_vote([A, A])


def test_it_rejects_two_agents_of_three_approving_only_once():
    # Each approves once in round 1 only: 0.1 each, all reject.
    finals = [rules.final_vote([A, R, R]) for _ in range(3)]
    assert rules.panel_decision(finals) is R


def test_a_round_three_approve_alone_reaches_the_threshold_exactly():
    # 0.5 is approve: the threshold is inclusive, in exact tenths.
    assert rules.score_tenths([R, R, A]) == 5
    assert rules.final_vote([R, R, A]) is A
    assert rules.final_vote([A, A, R]) is A
    assert rules.final_vote([A, R, R]) is R


def expected_change(agent: int, round_index: int, votes) -> tuple[bool, bool | None]:
    """The vote-change rule written out plainly: compare with the agent's own vote and with
    the two other agents' votes in the round before."""
    if round_index == 0:
        return (False, None)
    own_now = votes[agent][round_index]
    own_before = votes[agent][round_index - 1]
    others = [votes[i] for i in range(3) if i != agent]
    if any(len(other) < round_index for other in others):
        return (own_now != own_before, None)
    first_other, second_other = (other[round_index - 1] for other in others)
    if first_other != second_other:
        return (own_now != own_before, None)
    return (own_now != own_before, own_now == first_other)


def as_pairs(changes) -> list[list[tuple[bool, bool | None]]]:
    return [[(c.changed, c.with_majority) for c in agent] for agent in changes]


PANEL_VOTES = [
    (votes[0:3], votes[3:6], votes[6:9]) for votes in itertools.product([A, R], repeat=9)
]


@pytest.mark.parametrize(
    "votes", PANEL_VOTES, ids=lambda p: "-".join("".join(v[0] for v in a) for a in p)
)
def test_it_reports_every_vote_change_of_every_panel(votes):
    expected = [[expected_change(agent, r, votes) for r in range(3)] for agent in range(3)]
    assert as_pairs(rules.vote_changes(votes)) == expected
    # Round 1 compares with nothing.
    assert all(agent[0] == (False, None) for agent in expected)


# Lockstep rounds give the first five; the rule also copes with an agent more than one
# round behind, comparing only with the votes that exist.
@pytest.mark.parametrize(
    "rounds", [(1, 1, 0), (2, 1, 1), (2, 2, 1), (3, 3, 2), (3, 2, 2), (2, 2, 0), (3, 2, 1)]
)
@pytest.mark.parametrize("votes", PANEL_VOTES[::37])
def test_it_reports_the_vote_changes_of_a_judgement_under_way(votes, rounds):
    partial = [agent[:count] for agent, count in zip(votes, rounds, strict=True)]
    expected = [
        [expected_change(agent, r, partial) for r in range(count)]
        for agent, count in enumerate(rounds)
    ]
    assert as_pairs(rules.vote_changes(partial)) == expected


def test_a_change_to_the_vote_both_others_gave_is_with_the_majority():
    changes = rules.vote_changes([[A, R], [R, R], [R, R]])
    assert changes[0][1] == rules.VoteChange(changed=True, with_majority=True)
    # Balthasar's others split in round 1 (Melchior approved, Casper rejected).
    assert changes[1][1] == rules.VoteChange(changed=False, with_majority=None)


def test_a_change_while_the_others_split_is_neither_with_nor_against():
    changes = rules.vote_changes([[A, R], [A, R], [R, R]])
    assert changes[0][1] == rules.VoteChange(changed=True, with_majority=None)
    # Casper held out against the approve both others gave in round 1.
    assert changes[2][1] == rules.VoteChange(changed=False, with_majority=False)


def test_a_change_away_from_both_others_is_against_the_majority():
    changes = rules.vote_changes(
        [["approve", "reject"], ["approve", "approve"], ["approve", "reject"]]
    )
    assert changes[0][1] == rules.VoteChange(changed=True, with_majority=False)
    assert changes[1][1] == rules.VoteChange(changed=False, with_majority=True)
