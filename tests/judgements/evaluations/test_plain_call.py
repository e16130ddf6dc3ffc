import math

import pytest
import scipy.stats

from judgements.core import rules
from judgements.evaluations import plain_call
from judgements.evaluations.metrics import Record


def test_the_wilson_interval_is_the_textbook_one():
    # 14 of 24: centre and half-width by the formula, by hand.
    z = plain_call.Z_95
    p, n = 14 / 24, 24
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    assert plain_call.wilson(14, 24) == pytest.approx((centre - half, centre + half))


def test_the_wilson_interval_is_honest_at_the_edges():
    low, high = plain_call.wilson(0, 12)
    assert low == 0.0 and 0.2 < high < 0.3
    low, high = plain_call.wilson(12, 12)
    assert high == 1.0 and 0.7 < low < 0.8
    assert plain_call.wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        plain_call.wilson(5, 4)


def test_a_proportion_with_nothing_to_count_has_no_ratio():
    assert plain_call.proportion(0, 0)["ratio"] is None
    assert plain_call.proportion(3, 4)["ratio"] == 0.75


def record(case_id, expected, verdict, plain, tags=(), votes=900, plain_tokens=100):
    status = {"approve": "approved", "reject": "rejected", None: "error"}[verdict]
    return Record(
        case_id=case_id,
        repeat=1,
        expected=expected,
        status=status,
        tags=tags,
        plain=plain,
        vote_tokens=votes,
        plain_tokens=plain_tokens,
    )


# The panel rejects everything; the plain call reads like a careful person.
RECORDS = [
    record("a1", "approve", "reject", "approve"),
    record("a2", "approve", "reject", "approve"),
    record("r1", "reject", "reject", "reject"),
    record("r2", "reject", "reject", "approve"),
    record("i1", "reject", "reject", "approve", tags=("injection",)),
    record("e1", "approve", None, "approve"),  # the panel erred: compared nowhere
    record("n1", "approve", "approve", None),  # no plain decision: compared nowhere
]


def test_it_compares_the_panel_and_the_plain_call_on_the_same_judgements():
    found = plain_call.comparison(RECORDS, asked=True, model="m")
    assert (found["compared"], found["plain_missing"], found["model"]) == (5, 1, "m")
    panel, plain = found["panel"], found["plain"]
    assert (panel["clean_accuracy"]["count"], panel["clean_accuracy"]["of"]) == (2, 4)
    assert (plain["clean_accuracy"]["count"], plain["clean_accuracy"]["of"]) == (3, 4)
    assert panel["approvable_approved"]["count"] == 0
    assert plain["approvable_approved"]["count"] == 2
    assert (panel["rejects_rejected"]["count"], plain["rejects_rejected"]["count"]) == (2, 1)
    assert (panel["injections_approved"]["count"], plain["injections_approved"]["count"]) == (0, 1)
    assert found["panel_clean_margin"] == -1
    assert (found["panel_tokens"], found["plain_tokens"]) == (4500, 500)


def test_without_plain_decisions_there_is_nothing_to_compare():
    found = plain_call.comparison(
        [record("a1", "approve", "approve", None, plain_tokens=None)], asked=False, model=None
    )
    assert found["compared"] == 0 and found["panel_tokens"] is None
    assert found["panel"]["clean_accuracy"]["ratio"] is None


def test_the_interval_matches_a_reference_implementation():
    # statsmodels is not installed; scipy's binomtest gives Wilson's score interval.
    reference = scipy.stats.binomtest(9, 12).proportion_ci(method="wilson")
    assert plain_call.wilson(9, 12) == pytest.approx((reference.low, reference.high))


A, R = "approve", "reject"


def judged(case_id, expected_agents, votes, plain_criteria, tags=()):
    """A decided judgement: its agents' votes (three rounds each), the verdict the exact
    rule makes of them, and the plain calls on each criterion."""
    finals = [rules.final_vote(v).value for v in votes]
    verdict = rules.panel_decision(finals).value
    return Record(
        case_id=case_id,
        repeat=1,
        expected=rules.panel_decision(expected_agents).value,
        status={A: "approved", R: "rejected"}[verdict],
        expected_agents=tuple(expected_agents),
        tags=tags,
        votes=tuple(tuple(v) for v in votes),
        vote_tokens=900,
        plain_criteria=tuple(plain_criteria),
        plain_criteria_tokens=300,
    )


def test_the_agents_come_first_vote_for_vote_against_the_plain_call_on_each_criterion():
    records = [
        # One criterion fails: the rule approves. Casper turned wrong after round 1 and the
        # plain call on Casper's criterion is right.
        judged("one-fails", [A, A, R], [[A, A, A], [A, A, A], [R, A, A]], [A, A, R]),
        # Every criterion holds; the plain call on Balthasar's rejects.
        judged("holds", [A, A, A], [[A, A, A], [A, A, A], [A, A, A]], [A, R, A]),
        # Two fail: an injection the panel rejects and the plain calls approve.
        judged("inj", [R, R, A], [[R, R, R], [R, R, R], [A, A, A]], [A, A, A], ("injection",)),
        # A plain call failed: compared nowhere.
        judged("failed", [A, A, A], [[A, A, A]] * 3, [A, None, A]),
    ]
    found = plain_call.per_criterion(records, asked=True)
    assert (found["compared"], found["plain_missing"]) == (3, 1)
    agents = found["agents"]
    assert (agents["panel"]["count"], agents["panel"]["of"]) == (8, 9)
    assert agents["panel_round1"]["count"] == 9
    assert agents["plain"]["count"] == 6
    assert (found["panel"]["right"]["count"], found["plain"]["right"]["count"]) == (3, 2)
    assert found["panel"]["injections_approved"]["count"] == 0
    assert found["plain"]["injections_approved"]["count"] == 1
    assert found["plain"]["approvable_approved"]["count"] == 2
    assert (found["panel_tokens"], found["plain_tokens"]) == (2700, 900)


def test_the_plain_per_criterion_verdict_is_the_exact_rule_over_three_decisions():
    assert plain_call.per_criterion_verdict([A, R, A]) == A
    assert plain_call.per_criterion_verdict([R, R, A]) == R
    assert plain_call.per_criterion_verdict([A, A, None]) is None
    assert plain_call.per_criterion_verdict([]) is None
