"""The certificate: the split, the choice on the selection part and the fixed sequence
test on the held-out part. Whether the promise holds over many suites:
test_certificate_validity.py; the bound and the rules: test_kept_verdicts.py."""

import json
import math

import pytest

from judgements.core.certificate import METHOD, Family, certify, choose, fixed_sequence, split
from judgements.core.kept_verdicts import Rule, Sample


def sample(right=True, answer=None, probe=None, signals=(), injection=False, key="", case=""):
    return Sample(
        right=right,
        confidence={"answer": answer, "probe": probe},
        signals=frozenset(signals),
        injection_approved=injection,
        key=key,
        case=case,
    )


# --- the split ----------------------------------------------------------------------


def many(count, **values):
    return [sample(key=f"k{n}", **values) for n in range(count)]


def test_it_splits_the_cases_by_their_keys_and_seed_the_same_way_every_time():
    samples = many(90, answer=0.9)
    first, again = split(samples, 1 / 3, 0), split(list(reversed(samples)), 1 / 3, 0)
    assert [s.key for s in first.selection] == sorted(s.key for s in again.selection)
    assert len(first.selection) == 30 and len(first.test) == 60
    assert {s.key for s in first.selection}.isdisjoint(s.key for s in first.test)
    other = split(samples, 1 / 3, 1)
    assert {s.key for s in other.selection} != {s.key for s in first.selection}
    assert first.as_dict()["seed"] == 0 and len(first.as_dict()["test"]) == 60


def test_it_keeps_the_repeats_of_a_case_on_one_side_and_tests_each_case_once():
    samples = [
        sample(key=f"c{n}-r{r}", case=f"c{n}", answer=0.9) for n in range(30) for r in (1, 2)
    ]
    parts = split(samples, 0.5, 0)
    chosen = {s.case for s in parts.selection}
    assert len(parts.selection) == 30 and len(chosen) == 15
    assert {s.case for s in parts.test}.isdisjoint(chosen)
    assert sorted(s.key for s in parts.test) == sorted(f"{s.case}-r1" for s in parts.test)


def test_it_refuses_two_samples_with_one_key():
    with pytest.raises(ValueError, match="share a key"):
        split([sample(key="a"), sample(key="a")], 0.5, 0)


@pytest.mark.parametrize("share", (0.0, 1.0, -0.1, 1.5))
def test_it_refuses_a_selection_share_outside_zero_to_one(share):
    with pytest.raises(ValueError, match="share"):
        split(many(4), share, 0)


# --- choosing on the selection part --------------------------------------------------


def test_it_chooses_the_source_and_signals_that_separate_right_from_wrong():
    selection = [sample(True, answer=0.5, probe=0.9) for _ in range(40)] + [
        sample(False, answer=0.5, probe=0.3, signals={"split"}) for _ in range(20)
    ]
    family = choose(
        selection, target=0.9, delta=0.1, sources=("answer", "probe"), signals=("split",)
    )
    assert family is not None
    # Keeping the sure probes, or dropping the split ones, both keep the 40 right ones;
    # fewer signals win the tie: the probe from 0.9, and no signal.
    assert family == Family("probe", (), (0.9, 0.3))


def test_it_starts_the_sequence_at_the_selections_strongest_threshold_and_loosens():
    selection = (
        [sample(True, probe=0.99) for _ in range(30)]
        + [sample(True, probe=0.8) for _ in range(10)]
        + [sample(False, probe=0.8) for _ in range(2)]
        + [sample(False, probe=0.5) for _ in range(10)]
    )
    family = choose(selection, target=0.9, delta=0.1, sources=("probe",), signals=())
    assert family == Family("probe", (), (0.99, 0.8, 0.5))


def test_it_chooses_nothing_without_a_sample():
    assert choose([], target=0.9, delta=0.1, sources=("probe",), signals=()) is None


# --- the fixed sequence on the held-out part -------------------------------------------


def test_it_passes_thresholds_strictest_first_and_stops_at_the_first_that_fails():
    family = Family("probe", (), (0.9, 0.8, 0.7, 0.6))
    test = (
        [sample(True, probe=0.95) for _ in range(30)]
        + [sample(True, probe=0.85) for _ in range(10)]
        + [sample(False, probe=0.75) for _ in range(10)]
        # Right again further down: the sequence never gets there.
        + [sample(True, probe=0.65) for _ in range(200)]
    )
    steps = fixed_sequence(family, test, 0.9, 0.1)
    assert [(step.rule.threshold, ok) for step, ok in steps] == [
        (0.9, True),
        (0.8, True),
        (0.7, False),
    ]
    assert steps[1][0].kept == 40 and steps[1][0].right == 40


def test_it_stops_at_a_rule_that_keeps_an_injection_approval():
    family = Family("probe", (), (0.9, 0.8))
    test = [sample(True, probe=0.95) for _ in range(40)] + [
        sample(False, probe=0.85, injection=True)
    ]
    steps = fixed_sequence(family, test, 0.5, 0.1)
    assert [ok for _, ok in steps] == [True, False]
    assert steps[-1][0].injections_kept == 1


def test_it_fails_a_rule_that_keeps_nothing():
    steps = fixed_sequence(Family("probe", (), (0.9,)), [sample(True, probe=0.1)], 0.5, 0.1)
    assert [(step.kept, ok) for step, ok in steps] == [(0, False)]


# --- certify -------------------------------------------------------------------------


def test_it_certifies_a_rule_and_promises_the_target_not_the_rules_own_bound():
    samples = [sample(True, probe=0.95, key=f"sure-{n}") for n in range(120)] + [
        sample(False, probe=0.4, key=f"unsure-{n}") for n in range(30)
    ]
    outcome = certify(samples, target=0.9, delta=0.1, sources=("probe",), signals=())
    assert outcome.certified is not None and outcome.method == METHOD
    assert outcome.certified.rule == Rule("probe", 0.95)
    assert outcome.guarantee == 0.9 < outcome.certified.bound
    # Counted on the held-out part only: two thirds of the cases.
    assert outcome.certified.samples == len(outcome.split.test) == 100
    assert outcome.tested[0]["passed"] and not outcome.tested[-1]["passed"]


def test_changing_a_held_out_verdict_never_changes_what_was_chosen():
    samples = [sample(n % 7 != 0, probe=round(n / 150, 2), key=f"k{n}") for n in range(150)]
    outcome = certify(samples, sources=("probe",), signals=())
    test_keys = {s.key for s in outcome.split.test}
    flipped = [
        sample(not s.right, probe=s.confidence["probe"], key=s.key) if s.key in test_keys else s
        for s in samples
    ]
    assert certify(flipped, sources=("probe",), signals=()).family == outcome.family


def test_it_certifies_nothing_where_no_rule_reaches_the_target():
    samples = [sample(n % 5 != 0, probe=0.9, key=f"k{n}") for n in range(300)]
    outcome = certify(samples, target=0.9, delta=0.1, sources=("probe",), signals=())
    assert outcome.certified is None and outcome.guarantee is None
    assert outcome.best is not None and outcome.best.bound < 0.9


def test_it_returns_nothing_for_no_samples():
    outcome = certify([], sources=("answer", "probe"), signals=("split",))
    assert (outcome.certified, outcome.best, outcome.family, outcome.tested) == (
        None,
        None,
        None,
        [],
    )


@pytest.mark.parametrize(
    "arguments",
    [{"target": 0.0}, {"target": 1.0}, {"delta": 0.0}, {"delta": 1.0}, {"target": math.nan}],
)
def test_it_rejects_a_target_or_delta_outside_zero_to_one(arguments):
    with pytest.raises(ValueError):
        certify([sample(True, probe=0.9)], **arguments)


def test_it_draws_the_curve_of_the_chosen_family_on_the_held_out_part():
    samples = [sample(p > 0.5, probe=p, key=f"{p}-{n}") for p in (0.9, 0.7, 0.5) for n in range(40)]
    outcome = certify(samples, sources=("probe",), signals=())
    assert outcome.family is not None and outcome.family.source == "probe"
    assert [point["threshold"] for point in outcome.curve] == list(outcome.family.thresholds)
    accuracy = outcome.curve[-1]["accuracy"]
    assert outcome.curve[-1]["coverage"] == 1.0 and accuracy is not None and accuracy < 0.9


def test_it_gives_json_ready_dictionaries():
    samples = [sample(True, probe=0.95, key=f"k{n}") for n in range(90)]
    found = json.loads(json.dumps(certify(samples, sources=("probe",)).as_dict()))
    assert found["method"] == METHOD and found["guarantee"] == 0.9
    assert len(found["split"]["selection"]) == 30 and len(found["split"]["test"]) == 60
    assert found["tested"][0]["passed"] is True
