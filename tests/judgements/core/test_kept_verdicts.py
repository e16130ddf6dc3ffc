"""Which verdicts a rule keeps: the Clopper-Pearson bound and interval against scipy's
binomial test, the rules' semantics, and a rule's counts on samples."""

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from scipy import stats

from judgements.core.kept_verdicts import (
    Rule,
    Sample,
    clopper_pearson_lower,
    evaluate,
    interval,
)
from tests.support.commands import deployment_environment

DELTAS = (0.01, 0.05, 0.1, 0.25, 0.5, 0.9)


def reference(successes, trials, delta):
    # scipy's beta quantile is nan at a shape of zero; the bound is 0 there by definition.
    return (
        0.0 if successes == 0 else float(stats.beta.ppf(delta, successes, trials - successes + 1))
    )


def sample(right=True, answer=None, probe=None, signals=(), injection=False):
    return Sample(
        right=right,
        confidence={"answer": answer, "probe": probe},
        signals=frozenset(signals),
        injection_approved=injection,
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


# --- what the module costs a process that computes no bound -------------------------


def test_a_process_that_judges_does_not_import_scipy(tmp_path):
    """scipy.stats takes half a second to import; every process loads this module through
    the models, and only certifying and reports compute a bound (the first judgement's
    time, docs/benchmarks.md)."""
    root = Path(__file__).resolve().parents[3]
    program = (
        "import sys, django; django.setup()\n"
        "import judgements.management.commands.judge, judgements.engine.deliberation\n"
        "print(sorted(name for name in sys.modules if name.split('.')[0] == 'scipy'))\n"
    )
    env = deployment_environment(
        tmp_path, DJANGO_SETTINGS_MODULE="magi_site.settings", SECRET_KEY="no-scipy"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
