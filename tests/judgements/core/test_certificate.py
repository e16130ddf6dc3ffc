"""The selective-evaluation certificate: the Clopper-Pearson bound and interval against
scipy's binomial test, the rules' semantics, the split, the choice on the selection part
and the fixed sequence test on the held-out part. Whether the promise holds over many
suites: test_certificate_validity.py."""

import json
import math

import numpy
import pytest
from scipy import stats

from judgements.core.certificate import (
    METHOD,
    Family,
    Rule,
    Sample,
    certify,
    choose,
    clopper_pearson_lower,
    evaluate,
    fixed_sequence,
    interval,
    split,
)

DELTAS = (0.01, 0.05, 0.1, 0.25, 0.5, 0.9)


def reference(successes, trials, delta):
    # scipy's beta quantile is nan at a shape of zero; the bound is 0 there by definition.
    return (
        0.0 if successes == 0 else float(stats.beta.ppf(delta, successes, trials - successes + 1))
    )


def sample(right=True, answer=None, probe=None, signals=(), injection=False, key="", case=""):
    return Sample(
        right=right,
        confidence={"answer": answer, "probe": probe},
        signals=frozenset(signals),
        injection_approved=injection,
        key=key,
        case=case,
    )


# --- clopper_pearson_lower ----------------------------------------------------------


@pytest.mark.parametrize("delta", DELTAS)
def test_it_matches_scipy_beta_quantile_for_every_count_up_to_60(delta):
    for trials in range(1, 61):
        for successes in range(trials + 1):
            assert clopper_pearson_lower(successes, trials, delta) == pytest.approx(
                reference(successes, trials, delta), abs=1e-9, rel=0
            ), (successes, trials, delta)


@pytest.mark.parametrize("delta", (0.05, 0.1))
def test_it_matches_scipy_beta_quantile_for_1000_trials(delta):
    for successes in range(1001):
        assert clopper_pearson_lower(successes, 1000, delta) == pytest.approx(
            reference(successes, 1000, delta), abs=1e-9, rel=0
        ), successes


@pytest.mark.parametrize("delta", (0.01, 0.1, 0.5))
def test_it_matches_scipy_beta_quantile_for_10000_trials(delta):
    counts = [*range(0, 10_001, 97), *range(1, 30), *range(9_950, 10_001)]
    for successes in counts:
        assert clopper_pearson_lower(successes, 10_000, delta) == pytest.approx(
            reference(successes, 10_000, delta), abs=1e-9, rel=0
        ), successes


@pytest.mark.parametrize(("successes", "trials"), [(1, 3), (9, 10), (21, 22), (85, 100), (7, 7)])
@pytest.mark.parametrize("delta", (0.05, 0.1))
def test_it_matches_scipy_binomtest_one_sided_and_two_sided(successes, trials, delta):
    test = stats.binomtest(successes, trials)
    # The exact two-sided interval at 1 - 2 delta puts delta in each tail, so its lower
    # end is the one-sided bound at 1 - delta.
    two_sided = test.proportion_ci(confidence_level=1 - 2 * delta, method="exact").low
    one_sided = (
        stats.binomtest(successes, trials, alternative="greater")
        .proportion_ci(confidence_level=1 - delta, method="exact")
        .low
    )
    bound = clopper_pearson_lower(successes, trials, delta)
    assert bound == pytest.approx(two_sided, abs=1e-9, rel=0)
    assert bound == pytest.approx(one_sided, abs=1e-9, rel=0)


def test_it_gives_the_hand_checked_values():
    # n of n: P(X >= n) = p ** n = delta.
    assert clopper_pearson_lower(10, 10, 0.1) == pytest.approx(0.1 ** (1 / 10), abs=1e-12)
    assert clopper_pearson_lower(1, 1, 0.2) == pytest.approx(0.2, abs=1e-12)
    # 1 of 2: P(X >= 1) = 1 - (1 - p) ** 2 = delta.
    assert clopper_pearson_lower(1, 2, 0.1) == pytest.approx(1 - math.sqrt(0.9), abs=1e-12)
    # 1 of n: 1 - (1 - p) ** n = delta.
    assert clopper_pearson_lower(1, 50, 0.05) == pytest.approx(1 - 0.95 ** (1 / 50), abs=1e-12)
    # The textbook table: 9 of 10, one-sided 95 %: 0.6058.
    assert clopper_pearson_lower(9, 10, 0.05) == pytest.approx(0.6058, abs=5e-5)
    # 2 of 3 at delta 0.5: P(X >= 2) = 3 p^2 - 2 p^3 = 1/2 is symmetric about p = 1/2.
    assert clopper_pearson_lower(2, 3, 0.5) == pytest.approx(0.5, abs=1e-12)


def test_it_is_zero_without_successes_or_trials():
    assert clopper_pearson_lower(0, 0, 0.1) == 0.0
    assert clopper_pearson_lower(0, 1, 0.1) == 0.0
    assert clopper_pearson_lower(0, 10_000, 0.5) == 0.0


def test_it_rises_with_successes_and_falls_with_trials():
    for trials in (5, 40, 300):
        bounds = [clopper_pearson_lower(k, trials, 0.1) for k in range(trials + 1)]
        assert bounds == sorted(bounds) and len(set(bounds)) == trials + 1
    by_trials = [clopper_pearson_lower(5, n, 0.1) for n in range(5, 50)]
    assert by_trials == sorted(by_trials, reverse=True)


@pytest.mark.parametrize(
    ("successes", "trials", "delta", "message"),
    [
        (3, 2, 0.1, "more successes than trials"),
        (12, 10, 0.1, "more successes than trials"),
        (-1, 2, 0.1, "negative"),
        (0, -1, 0.1, "negative"),
        (1, 2, 0.0, "delta"),
        (1, 2, 1.0, "delta"),
        (1, 2, -0.1, "delta"),
        (1, 2, 1.5, "delta"),
        (1, 2, math.nan, "delta"),
        (0, 0, 0.0, "delta"),
    ],
)
def test_it_rejects_invalid_input(successes, trials, delta, message):
    with pytest.raises(ValueError, match=message):
        clopper_pearson_lower(successes, trials, delta)


@pytest.mark.parametrize(("successes", "trials"), [(1.5, 2), (1, 2.0), ("1", 2)])
def test_it_rejects_counts_that_are_not_integers(successes, trials):
    with pytest.raises(TypeError):
        clopper_pearson_lower(successes, trials, 0.1)


def test_it_accepts_integer_like_counts():
    assert clopper_pearson_lower(numpy.int64(9), numpy.int64(10), 0.05) == (
        clopper_pearson_lower(9, 10, 0.05)
    )


def test_it_needs_22_right_verdicts_for_a_090_bound_at_delta_010():
    assert clopper_pearson_lower(22, 22, 0.1) >= 0.9 > clopper_pearson_lower(21, 21, 0.1)
    # And the figures the module's docstring gives for one and two wrong verdicts.
    assert clopper_pearson_lower(37, 38, 0.1) >= 0.9 > clopper_pearson_lower(36, 37, 0.1)
    assert clopper_pearson_lower(50, 52, 0.1) >= 0.9 > clopper_pearson_lower(49, 51, 0.1)


# --- Rule ---------------------------------------------------------------------------


def test_it_never_keeps_an_unknown_confidence():
    rule = Rule("answer", 0.0)
    assert not rule.keeps(sample(answer=None, probe=1.0))
    assert not rule.keeps(Sample(right=True, confidence={}))
    assert rule.keeps(sample(answer=0.0))
    # Without a confidence condition an unknown confidence does not matter.
    assert Rule(None, None).keeps(sample())


def test_it_keeps_a_confidence_at_the_threshold_and_above():
    rule = Rule("probe", 0.7)
    assert rule.keeps(sample(probe=0.7))
    assert rule.keeps(sample(probe=0.71))
    assert not rule.keeps(sample(probe=0.69, answer=1.0))


def test_it_drops_a_verdict_on_which_an_absent_signal_fired():
    rule = Rule(None, None, ("split",))
    assert not rule.keeps(sample(signals={"split", "retried"}))
    assert rule.keeps(sample(signals={"retried"}))
    assert not Rule("answer", 0.5, ("late_change", "split")).keeps(
        sample(answer=0.9, signals={"late_change"})
    )


def test_it_describes_rules_in_plain_english():
    assert Rule(None, None).describe() == "every verdict"
    assert (
        Rule("answer", 0.93, ("split", "late_change")).describe()
        == "answer confidence at least 0.93 and no late_change or split signal"
    )
    assert Rule("probe", 0.5).describe() == "probe confidence at least 0.5"
    assert Rule(None, None, ("split",)).describe() == "no split signal"
    assert (
        Rule(None, None, ("split", "copied", "retried")).describe()
        == "no copied, retried or split signal"
    )


def test_it_sorts_the_absent_signals_and_round_trips_through_json():
    rule = Rule("answer", 0.8, ("split", "copied", "split"))
    assert rule.absent == ("copied", "split")
    data = json.loads(json.dumps(rule.as_dict()))
    assert data == {"source": "answer", "threshold": 0.8, "absent": ["copied", "split"]}
    assert Rule.from_dict(data) == rule
    assert Rule.from_dict({"source": None, "threshold": None, "absent": []}) == Rule(None, None)
    read = Rule.from_dict({"source": "probe", "threshold": 1})
    assert read == Rule("probe", 1.0)
    assert json.dumps(read.as_dict()["threshold"]) == "1.0"


@pytest.mark.parametrize(
    "data",
    [
        {"source": "answer", "threshold": None, "absent": []},
        {"source": None, "threshold": 0.5, "absent": []},
        {"source": 3, "threshold": 0.5},
        {"source": "answer", "threshold": "high"},
        {"source": "answer", "threshold": True},
        {"source": "answer", "threshold": 1.5},
        {"source": "answer", "threshold": -0.1},
        {"source": "answer", "threshold": math.nan},
        {"source": None, "threshold": None, "absent": "split"},
        {"source": None, "threshold": None, "absent": [1]},
        {"source": None, "threshold": None, "extra": 1},
    ],
)
def test_it_rejects_a_malformed_rule(data):
    with pytest.raises(ValueError):
        Rule.from_dict(data)


@pytest.mark.parametrize("value", [-0.1, 1.5, math.nan])
def test_it_rejects_a_confidence_outside_zero_to_one(value):
    with pytest.raises(ValueError):
        sample(answer=value)


# --- evaluate ---------------------------------------------------------------------


def test_it_evaluates_a_rule_on_samples():
    samples = [
        sample(True, answer=0.9),
        sample(False, answer=0.95, injection=True),
        sample(True, answer=0.8, signals={"split"}),
        sample(True, answer=0.3),
        sample(False, answer=None),
    ]
    result = evaluate(Rule("answer", 0.8, ("split",)), samples, 0.1)
    assert (result.samples, result.kept, result.right, result.injections_kept) == (5, 2, 1, 1)
    assert result.coverage == pytest.approx(0.4)
    assert result.accuracy == pytest.approx(0.5)
    assert result.bound == clopper_pearson_lower(1, 2, 0.1)
    assert json.loads(json.dumps(result.as_dict()))["description"] == (
        "answer confidence at least 0.8 and no split signal"
    )


def test_it_evaluates_without_samples_or_kept_verdicts():
    empty = evaluate(Rule(None, None), [], 0.1)
    assert (empty.kept, empty.coverage, empty.accuracy, empty.bound) == (0, None, None, 0.0)
    none_kept = evaluate(Rule("answer", 0.5), [sample(answer=0.2)], 0.1)
    assert (none_kept.coverage, none_kept.accuracy, none_kept.bound) == (0.0, None, 0.0)


@pytest.mark.parametrize(("successes", "trials"), [(0, 5), (3, 10), (9, 10), (10, 10), (40, 52)])
@pytest.mark.parametrize("delta", (0.05, 0.1))
def test_its_interval_matches_scipys_exact_two_sided_one(successes, trials, delta):
    reference = stats.binomtest(successes, trials).proportion_ci(1 - delta, method="exact")
    low, high = interval(successes, trials, delta)
    assert low == pytest.approx(reference.low, abs=1e-9)
    assert high == pytest.approx(reference.high, abs=1e-9)


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
    assert outcome.curve[-1]["coverage"] == 1.0 and outcome.curve[-1]["accuracy"] < 0.9


def test_it_gives_json_ready_dictionaries():
    samples = [sample(True, probe=0.95, key=f"k{n}") for n in range(90)]
    found = json.loads(json.dumps(certify(samples, sources=("probe",)).as_dict()))
    assert found["method"] == METHOD and found["guarantee"] == 0.9
    assert len(found["split"]["selection"]) == 30 and len(found["split"]["test"]) == 60
    assert found["tested"][0]["passed"] is True
