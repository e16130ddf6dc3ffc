"""The contested mark over every combination of what it reads: the 512 vote patterns of
three agents (which decide split, late change and conformity) times the 16 combinations
of the four answer-level signals (copied reason, stated absence, recheck, retry)."""

import itertools

import pytest

from judgements.core import rules
from judgements.core.checks import Found
from judgements.core.contested import (
    COUNTED,
    YIELD_TO_OPINION,
    AgentRecord,
    Answer,
    Checked,
    Signal,
    Trust,
    assess,
    mark,
)
from judgements.core.kept_verdicts import Rule

NAMES = ("Melchior", "Balthasar", "Casper")
CONTENT = "Expense claim: taxi 38 EUR, receipt attached."
SEQUENCES = ["".join(s) for s in itertools.product("AR", repeat=3)]
VOTE = {"A": "approve", "R": "reject"}


def final(sequence: str) -> str:
    # The rule as the brief states it, independently: 0.1/0.4/0.5 in tenths, 5 approves.
    tenths = sum(w for w, v in zip((1, 4, 5), sequence, strict=True) if v == "A")
    return "A" if tenths >= 5 else "R"


def expected_vote_signals(pattern: tuple[str, ...]) -> set[Signal]:
    signals = set()
    finals = [final(s) for s in pattern]
    if len(set(finals)) == 2:
        signals.add(Signal.SPLIT)
    if any(f != s[0] for f, s in zip(finals, pattern, strict=True)):
        signals.add(Signal.LATE_CHANGE)
    for index, sequence in enumerate(pattern):
        others = [p for i, p in enumerate(pattern) if i != index]
        for r in (1, 2):
            both = {o[r - 1] for o in others}
            if sequence[r] != sequence[r - 1] and both == {sequence[r]}:
                signals.add(Signal.CONFORMED)
    return signals


def record(pattern, *, copied=False, stated=False, rechecked=False, retried=False):
    agents = []
    for index, (name, sequence) in enumerate(zip(NAMES, pattern, strict=True)):
        answers = []
        for r, vote in enumerate(sequence, start=1):
            reason = f"{name}'s own reason in round {r}."
            if copied and index == 0 and r == 2:
                reason = "Balthasar's own reason in round 1."  # word for word, a peer's
            answers.append(
                Answer(
                    round=r,
                    decision=VOTE[vote],
                    reason=reason,
                    # Every answer claims the receipt is missing; only a reject's counts.
                    missing=("receipt",) if stated else ("hotel invoice",),
                    attempts=2 if retried and index == 2 and r == 3 else 1,
                    rechecked=rechecked and index == 1 and r == 1,
                )
            )
        agents.append(AgentRecord(name, tuple(answers)))
    return agents


PATTERNS = list(itertools.product(SEQUENCES, repeat=3))
FLAGS = list(itertools.product((False, True), repeat=4))


@pytest.mark.parametrize("flags", FLAGS, ids=lambda f: "".join("1" if x else "0" for x in f))
def test_every_vote_pattern_with_every_answer_signal(flags):
    copied, stated, rechecked, retried = flags
    for pattern in PATTERNS:
        contest = assess(
            CONTENT,
            record(pattern, copied=copied, stated=stated, rechecked=rechecked, retried=retried),
        )
        expected = expected_vote_signals(pattern)
        if copied:
            expected.add(Signal.COPIED)
        if stated and "R" in "".join(pattern):
            expected.add(Signal.STATED_ABSENCE)
        if rechecked:
            expected.add(Signal.RECHECKED)
        if retried:
            expected.add(Signal.RETRIED)
        assert set(contest.signals) == {s.value for s in expected}, pattern
        assert contest.contested == bool(expected & COUNTED), pattern
        assert contest.level == len(expected)
        assert bool(contest.reasons) == contest.contested


def test_the_mark_never_touches_the_verdict():
    # assess reads the record and returns no verdict: the panel's stays the rule's.
    for pattern in PATTERNS:
        agents = record(pattern, copied=True, stated=True)
        before = rules.panel_decision([rules.final_vote(a.votes) for a in agents])
        assess(CONTENT, agents)
        assert rules.panel_decision([rules.final_vote(a.votes) for a in agents]) is before


def test_the_reasons_say_what_happened_in_words():
    contest = assess(CONTENT, record(("AAA", "AAA", "RRA"), copied=True, stated=True))
    assert contest.reasons == [
        "Casper's approve came from a round-3 change (round 1: reject).",
        "Melchior's round-2 reason repeats word for word Balthasar's round-1 reason, about "
        "Balthasar's criterion.",
        'Casper rejected in round 1 for lack of "receipt", which the content states.',
        'Casper rejected in round 2 for lack of "receipt", which the content states.',
    ]


def test_a_split_names_the_lone_agent():
    contest = assess(CONTENT, record(("AAA", "RRR", "AAA")))
    assert contest.reasons == [
        "The panel split 2-1: Balthasar decided reject against the others' approve."
    ]


def test_conformity_and_retries_are_reported_but_not_counted():
    # Melchior goes back to approve in round 3, with both others' round-2 votes.
    contest = assess(CONTENT, record(("ARA", "AAA", "AAA"), retried=True, rechecked=True))
    assert not contest.contested
    assert contest.signals == ["conformed", "rechecked", "retried"]
    assert [f.words for f in contest.findings] == [
        "Melchior changed to approve in round 3, the vote both others gave the round before.",
        "Balthasar's round-1 answer failed a check and was asked again.",
        "Casper's round-3 answer needed 2 attempts.",
    ]


def test_a_clean_unanimous_record_is_not_contested():
    contest = assess(CONTENT, record(("AAA", "AAA", "AAA")))
    assert not contest.contested
    assert contest.findings == ()
    assert contest.level == 0


def checked(opinion: str | None = None, steered: bool | None = None) -> tuple[Checked, ...]:
    """What the second opinion and the screen found, as the stored checks give it (a
    check that did not run or failed gives nothing)."""
    found = []
    if opinion is not None:
        found.append(Checked("second_opinion", Found(p_approve=0.7, decision=opinion)))
    if steered is not None:
        found.append(Checked("screen", Found(flagged=steered)))
    return tuple(found)


CHECKS = [
    (opinion, steered) for opinion in (None, "approve", "reject") for steered in (None, False, True)
]


@pytest.mark.parametrize(("opinion", "steered"), CHECKS)
def test_every_vote_pattern_with_every_finding_of_the_checks(opinion, steered):
    for pattern in PATTERNS:
        contest = assess(CONTENT, record(pattern), checked(opinion, steered))
        expected = expected_vote_signals(pattern)
        verdict = "approve" if [final(s) for s in pattern].count("A") >= 2 else "reject"
        if opinion is not None and opinion != verdict:
            expected.add(Signal.SECOND_OPINION)
        if steered:
            expected.add(Signal.INJECTION)
        assert set(contest.signals) == {s.value for s in expected}, pattern
        # A second opinion that decided stands in for the record's split, late change,
        # copied reason and stated absence: they are reported, not counted.
        counts = COUNTED - YIELD_TO_OPINION if opinion is not None else COUNTED
        assert contest.contested == bool(expected & counts), pattern


def test_a_second_opinion_that_decided_stands_in_for_the_records_split():
    split = record(("AAA", "AAA", "RRR"), copied=True, stated=True)
    # No second opinion, or one whose call failed (no decision): the record counts.
    for found in ((), (Checked("second_opinion", Found()),)):
        assert assess(CONTENT, split, found).contested
    # One that agrees with the panel: the split and the rest are reported, not counted.
    agreed = assess(CONTENT, split, checked(opinion="approve"))
    assert not agreed.contested
    assert {"split", "copied", "stated_absence"} <= set(agreed.signals)
    # One that disagrees contests it, in its own words alone.
    against = assess(CONTENT, split, checked(opinion="reject"))
    assert against.reasons == [
        "A second opinion, reading the content against the three criteria and the panel's "
        "rule (two of three must hold), decided reject against the panel's approve."
    ]
    # The injection screen is no reading of the case: beside it alone the split counts.
    assert assess(CONTENT, split, checked(steered=False)).contested


def test_an_off_criterion_turn_counts_beside_a_second_opinion_that_agrees():
    off = "The deploy is scheduled on a Tuesday, so the timing is fine."
    contest = assess(CONTENT, turned("AAR", off), checked(opinion="approve"))
    assert contest.reasons == [
        "Melchior changed to reject in round 3 after voting approve before, with a reason "
        "not about its own criterion."
    ]


def test_the_checks_findings_say_what_they_found_in_words():
    found = checked(opinion="reject", steered=True)
    contest = assess(CONTENT, record(("AAA", "AAA", "AAA")), found)
    assert contest.reasons == [
        "A second opinion, reading the content against the three criteria and the panel's "
        "rule (two of three must hold), decided "
        "reject against the panel's approve.",
        "The injection screen: asked to repeat a check word and ignore the content, the model "
        "did not. The content may carry instructions that steer a model.",
    ]


def test_without_a_certificate_an_uncontested_verdict_is_unmeasured_never_not_contested():
    for pattern in PATTERNS:
        contest = assess(CONTENT, record(pattern))
        found = mark(contest, {"answer": 0.99, "probe": 0.99}, None)
        assert found.trust is (Trust.CONTESTED if contest.contested else Trust.UNMEASURED)
        assert found.trust is not Trust.NOT_CONTESTED


def test_with_a_certificate_its_rule_alone_decides():
    rule = Rule("answer", 0.9, ("injection",))
    split = assess(CONTENT, record(("AAA", "AAA", "RRR")))
    # Kept: sure enough and no injection signal, even though the panel split.
    assert mark(split, {"answer": 0.95}, rule).trust is Trust.NOT_CONTESTED
    unsure = mark(split, {"answer": 0.5}, rule)
    assert unsure.trust is Trust.CONTESTED
    assert unsure.reasons == ("The panel's answer confidence 0.50 is below the certified 0.90.",)
    unknown = mark(split, {"answer": None}, rule)
    assert unknown.reasons == ("The panel's answer confidence is unknown.",)
    steered = assess(CONTENT, record(("AAA", "AAA", "AAA")), checked(steered=True))
    found = mark(steered, {"answer": 0.99}, rule)
    assert found.trust is Trust.CONTESTED
    assert found.reasons[0].startswith("The injection screen")


DEPLOY_CRITERIA = (
    "Tests. Approve when the automated test suite passed on the exact commit deployed.",
    "Review and rollback. Approve when someone other than the author reviewed it and a "
    "rollback plan is stated.",
    "Timing. Approve a deploy scheduled Monday to Thursday or fixing an active incident.",
)


def turned(votes: str, last_reason: str, criteria=DEPLOY_CRITERIA) -> list[AgentRecord]:
    """Melchior votes `votes` (its last answer giving `last_reason`); the others approve."""
    agents = []
    for index, name in enumerate(NAMES):
        sequence = votes if index == 0 else "AAA"
        answers = tuple(
            Answer(r, VOTE[v], last_reason if r == len(sequence) else f"{name} {r}.")
            for r, v in enumerate(sequence, start=1)
        )
        agents.append(AgentRecord(name, answers, criteria[index] if criteria else ""))
    return agents


def test_a_turn_after_two_same_votes_for_a_reason_off_its_criterion_is_a_signal():
    off = "The deploy is scheduled on a Tuesday, so the timing is fine."
    contest = assess(CONTENT, turned("RRA", off))
    assert Signal.OFF_CRITERION_CHANGE in contest.signals
    # It contests the verdict, in its own words among the reasons (issue 54, item 4).
    assert Signal.OFF_CRITERION_CHANGE in COUNTED
    assert contest.contested
    assert (
        "Melchior changed to approve in round 3 after voting reject before, with a reason "
        "not about its own criterion." in contest.reasons
    )
    # The same turn for a fact about its own criterion is deliberation doing its job.
    own = "Pipeline 88 ran the test suite on the exact commit and it passed."
    assert Signal.OFF_CRITERION_CHANGE not in assess(CONTENT, turned("RRA", own)).signals
    # Not after two rounds of the same vote, not a turn at all, or no criteria known.
    for votes, criteria in (("RAA", DEPLOY_CRITERIA), ("AAA", DEPLOY_CRITERIA), ("RRA", ())):
        found = assess(CONTENT, turned(votes, off, criteria)).signals
        assert Signal.OFF_CRITERION_CHANGE not in found, votes
    # A turn to reject counts as well: any change after two rounds of the same vote.
    assert Signal.OFF_CRITERION_CHANGE in assess(CONTENT, turned("AAR", off)).signals
