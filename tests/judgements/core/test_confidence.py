"""The model's own confidence read from token log-probabilities, as providers tokenise an
answer in different ways, and a verdict's confidence from its agents'."""

import math

import pytest

from judgements.core.confidence import (
    Token,
    answer_probability,
    in_verdict,
    panel_confidence,
    probe_probability,
)


def tokens(*pieces, at: str, alternatives: dict[str, float]) -> list[Token]:
    """The pieces as tokens, certain but for the one equal to `at`."""
    found = []
    for piece in pieces:
        if piece == at:
            listed = tuple((text, math.log(p)) for text, p in alternatives.items())
            found.append(Token(piece, listed[0][1], listed))
        else:
            found.append(Token(piece, 0.0, ((piece, 0.0),)))
    return found


def test_it_reads_approve_against_reject_at_criterion_met():
    answer = tokens(
        '{"reason": "',
        "Fine",
        '.", "',
        "criterion_met",
        '":',
        " true",
        ', "decision": "approve"}',
        at=" true",
        alternatives={" true": 0.6, " false": 0.2, " tr": 0.1, "\n": 0.1},
    )
    # (0.6 + 0.1) against 0.2; the newline is neither side.
    assert answer_probability(answer) == pytest.approx(0.7 / 0.9)


def test_it_skips_the_spacing_before_the_value():
    answer = tokens(
        '{"criterion_met":',
        " ",
        "false",
        ', "decision": "reject"}',
        at="false",
        alternatives={"false": 0.9, "true": 0.1},
    )
    assert answer_probability(answer) == pytest.approx(0.1)


def test_a_token_that_holds_the_key_and_the_value_is_read_after_the_key():
    answer = tokens(
        '{"reason": "x", "criterion_met": true',
        ', "decision": "approve"}',
        at='{"reason": "x", "criterion_met": true',
        alternatives={
            '{"reason": "x", "criterion_met": true': 0.75,
            '{"reason": "x", "criterion_met": false': 0.25,
        },
    )
    assert answer_probability(answer) == pytest.approx(0.75)


def test_without_criterion_met_it_reads_the_decision():
    answer = tokens(
        '{"decision": "',
        "rej",
        'ect", "reason": "no"}',
        at="rej",
        alternatives={"rej": 0.3, "app": 0.7},
    )
    assert answer_probability(answer) == pytest.approx(0.7)


def test_unknown_is_none_never_a_guess():
    assert answer_probability([]) is None
    assert answer_probability(tokens("no json here", at="", alternatives={})) is None
    neither = tokens('{"criterion_met": ', "maybe", "}", at="maybe", alternatives={"maybe": 1.0})
    assert answer_probability(neither) is None
    assert probe_probability([]) is None


def test_a_probe_reads_its_first_token():
    reply = tokens(" Approve", ".", at=" Approve", alternatives={" Approve": 0.8, " reject": 0.2})
    assert probe_probability(reply) == pytest.approx(0.8)


def test_a_verdicts_confidence_is_its_least_sure_agents():
    assert in_verdict(0.8, "reject") == pytest.approx(0.2)
    assert panel_confidence([0.9, 0.8, 0.3], "approve") == pytest.approx(0.3)
    assert panel_confidence([0.1, 0.2, 0.9], "reject") == pytest.approx(0.1)
    assert panel_confidence([0.9, None, 0.9], "approve") is None


@pytest.mark.parametrize("p_approve", [0.07, 0.3, 0.1, 0.93, 0.123457, 0.999999])
def test_a_rejects_confidence_is_rounded_as_an_approves_is(p_approve):
    rejecting = in_verdict(p_approve, "reject")
    approving = in_verdict(round(1 - p_approve, 6), "approve")
    # 1 - 0.07 is 0.9299999999999999 in floating point: a threshold of 0.93 learned on
    # approvals would miss the reject at the same confidence.
    assert rejecting == approving
    assert panel_confidence([p_approve] * 3, "reject") == approving
