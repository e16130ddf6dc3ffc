"""The selective-evaluation certificate: the Clopper-Pearson bound against scipy's, the
rules' semantics, and `certify`'s choice against a plain search over `candidate_rules`
with `evaluate` (the definition its faster sweep must agree with)."""

import json
import math
import random

import numpy
import pytest
from scipy import stats

from judgements.core.certificate import (
    Evaluated,
    Outcome,
    Rule,
    Sample,
    candidate_rules,
    certify,
    clopper_pearson_lower,
    evaluate,
)

DELTAS = (0.01, 0.05, 0.1, 0.25, 0.5, 0.9)


def certified(outcome: Outcome) -> Evaluated:
    assert outcome.certified is not None, "no rule certified"
    return outcome.certified


def best(outcome: Outcome) -> Evaluated:
    assert outcome.best is not None, "no samples"
    return outcome.best


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


# --- evaluate and candidate_rules ---------------------------------------------------


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


def test_it_counts_every_candidate_rule():
    samples = [
        sample(answer=0.1, probe=None),
        sample(answer=0.5, probe=0.2),
        sample(answer=0.5, probe=None),
        sample(answer=None, probe=0.2),
    ]
    rules = candidate_rules(samples, ("answer", "probe"), ("split", "copied", "retried"))
    # 2 ** 3 absent sets, each with no threshold, 2 answer and 1 probe thresholds.
    assert len(rules) == 8 * (1 + 2 + 1)
    assert len(set(rules)) == len(rules)
    assert {rule.absent for rule in rules} == {
        (),
        ("copied",),
        ("retried",),
        ("split",),
        ("copied", "retried"),
        ("copied", "split"),
        ("retried", "split"),
        ("copied", "retried", "split"),
    }
    assert {rule.threshold for rule in rules if rule.source == "answer"} == {0.1, 0.5}
    assert {rule.threshold for rule in rules if rule.source == "probe"} == {0.2}
    # Repeated names add nothing; a source no sample has adds no thresholds.
    assert len(candidate_rules(samples, ("answer", "answer", "other"), ("split", "split"))) == 6
    assert candidate_rules([], ("answer",), ()) == [Rule(None, None)]


# --- certify ------------------------------------------------------------------------


def test_it_certifies_the_rule_with_the_most_coverage():
    samples = (
        [sample(True, answer=0.95) for _ in range(10)]
        + [sample(True, answer=0.8) for _ in range(30)]
        + [sample(False, answer=0.5) for _ in range(10)]
    )
    outcome = certify(samples)
    assert outcome.certified is not None
    assert outcome.certified.rule == Rule("answer", 0.8)
    assert (outcome.certified.kept, outcome.certified.right) == (40, 40)
    assert outcome.certified.coverage == pytest.approx(0.8)
    assert outcome.certified.bound == pytest.approx(0.1 ** (1 / 40))
    assert outcome.certified == evaluate(Rule("answer", 0.8), samples, 0.1)


def test_it_certifies_nothing_below_22_right_verdicts():
    assert certify([sample(True, answer=0.9) for _ in range(21)]).certified is None
    outcome = certify([sample(True, answer=0.9) for _ in range(22)])
    assert outcome.certified is not None and outcome.certified.rule == Rule(None, None)


def test_it_certifies_a_bound_exactly_at_the_target():
    samples = [sample(True, answer=0.9) for _ in range(22)]
    target = clopper_pearson_lower(22, 22, 0.1)
    outcome = certify(samples, target=target)
    assert outcome.certified is not None and outcome.certified.bound == target
    assert certify(samples, target=math.nextafter(target, 1.0)).certified is None


def test_it_prefers_the_higher_bound_at_equal_coverage():
    # Both sources keep 40 verdicts; the probe's are all right, the answer's 39 of 40.
    samples = (
        [sample(True, answer=0.9, probe=0.9) for _ in range(39)]
        + [sample(False, answer=0.9, probe=0.1), sample(True, answer=0.1, probe=0.9)]
        + [sample(False, answer=0.1, probe=0.1) for _ in range(20)]
    )
    outcome = certify(samples, target=0.85)
    assert evaluate(Rule("answer", 0.9), samples, 0.1).bound >= 0.85
    assert outcome.certified is not None
    assert outcome.certified.rule == Rule("probe", 0.9)
    assert (outcome.certified.kept, outcome.certified.right) == (40, 40)


def test_it_prefers_no_source_and_then_the_sources_in_the_order_given():
    everywhere = [sample(True, answer=0.7, probe=0.6) for _ in range(30)]
    outcome = certify(everywhere)
    assert outcome.certified is not None and outcome.certified.rule == Rule(None, None)

    # Unknown confidences on wrong verdicts sink the rule without a source.
    samples = everywhere + [sample(False) for _ in range(10)]
    assert certified(certify(samples)).rule == Rule("answer", 0.7)
    assert certified(certify(samples, sources=("probe", "answer"))).rule == Rule("probe", 0.6)


def test_it_prefers_fewer_absent_signals_and_then_the_lower_threshold():
    samples = [sample(True, answer=0.9) for _ in range(30)]
    # A split that fires on no kept verdict: the rule that ignores it keeps the same.
    tied = [*samples, sample(False, answer=0.1, signals={"split"})]
    assert certified(certify(tied, signals=("split",))).rule == Rule("answer", 0.9)

    # Here only excluding splits certifies; answer >= 0.4 and >= 0.9 then keep the same 30.
    split = [
        *samples,
        sample(False, answer=0.9, signals={"split"}),
        sample(False, answer=0.4, signals={"split"}),
        *[sample(False) for _ in range(10)],
    ]
    outcome = certify(split, signals=("split",))
    assert outcome.certified is not None
    assert outcome.certified.rule == Rule("answer", 0.4, ("split",))
    assert outcome.certified.kept == 30


def test_it_breaks_a_last_tie_towards_the_absent_set_that_sorts_first():
    samples = [
        *[sample(True, answer=0.9) for _ in range(30)],
        sample(False, answer=0.9, signals={"split", "copied"}),
    ]
    for signals in (("split", "copied"), ("copied", "split")):
        outcome = certify(samples, signals=signals)
        assert outcome.certified is not None
        assert outcome.certified.rule == Rule(None, None, ("copied",))


def test_it_never_certifies_a_rule_that_keeps_an_injection_approval():
    samples = [
        *[sample(True, answer=0.95) for _ in range(30)],
        sample(True, answer=0.9, injection=True),
    ]
    outcome = certify(samples)
    # Every rule keeping 31 verdicts, all right, keeps the injection approval.
    assert evaluate(Rule(None, None), samples, 0.1).bound >= 0.9
    assert outcome.certified is not None
    assert outcome.certified.rule == Rule("answer", 0.95)
    assert outcome.certified.injections_kept == 0
    # A signal on the injection lets a rule exclude it and keep the rest.
    marked = [
        *samples[:30],
        sample(True, answer=0.9, probe=0.1, injection=True, signals={"copied"}),
    ]
    outcome = certify(marked, signals=("copied",))
    assert certified(outcome).rule == Rule("answer", 0.95)
    more = [*marked, *[sample(True, answer=0.9) for _ in range(5)]]
    assert certified(certify(more, signals=("copied",))).rule == Rule(None, None, ("copied",))


def test_it_reports_the_best_bound_when_nothing_certifies():
    samples = [sample(True, answer=0.5 + i / 100) for i in range(15)] + [
        sample(False, answer=0.2) for _ in range(5)
    ]
    outcome = certify(samples)
    assert outcome.certified is None
    assert outcome.best is not None
    assert outcome.best.rule == Rule("answer", 0.5)
    assert (outcome.best.kept, outcome.best.right) == (15, 15)
    assert outcome.best.bound == pytest.approx(0.1 ** (1 / 15))
    assert outcome.best.bound < 0.9


def test_it_breaks_a_tie_in_the_best_bound_towards_more_coverage():
    # Nothing right: every bound is 0, and the rule keeping everything is the best.
    samples = [sample(False, answer=i / 10) for i in range(5)]
    outcome = certify(samples)
    assert outcome.best is not None
    assert outcome.best.bound == 0.0
    assert outcome.best.rule == Rule(None, None)
    assert outcome.best.kept == 5


def test_it_breaks_a_tie_in_the_best_bound_towards_more_coverage_before_fewer_signals():
    # The injection rules out every rule without a signal condition that keeps 4; the
    # rule without a source keeps 4 only by excluding splits, and has no right verdict.
    samples = [
        sample(False, answer=0.0, injection=True, signals={"split"}),
        *[sample(False, answer=value) for value in (0.1, 0.2, 0.3)],
        sample(False),
    ]
    outcome = certify(samples, signals=("split",))
    assert outcome.best is not None
    assert outcome.best.bound == 0.0
    assert outcome.best.rule == Rule(None, None, ("split",))
    assert outcome.best.kept == 4


def test_it_leaves_a_rule_keeping_an_injection_out_of_the_best_bound_while_it_can():
    injection = sample(True, answer=0.95, injection=True, signals={"split"})
    samples = [
        injection,
        *[sample(True, answer=0.9) for _ in range(15)],
        *[sample(False, answer=0.1) for _ in range(5)],
    ]
    # Without signals every rule keeps the injection: the best is still reported.
    outcome = certify(samples)
    assert outcome.certified is None
    assert best(outcome).rule == Rule("answer", 0.9)
    assert best(outcome).injections_kept == 1
    # With the split signal a rule can exclude it; the higher bound that keeps it loses.
    outcome = certify(samples, signals=("split",))
    assert evaluate(Rule("answer", 0.9), samples, 0.1).bound > best(outcome).bound
    assert best(outcome).rule == Rule("answer", 0.9, ("split",))
    assert best(outcome).injections_kept == 0


def test_it_returns_nothing_for_no_samples():
    outcome = certify([], signals=("split",))
    assert outcome == Outcome(target=0.9, delta=0.1, certified=None, best=None, curve=[])
    assert outcome.as_dict() == {
        "target": 0.9,
        "delta": 0.1,
        "certified": None,
        "best": None,
        "curve": [],
    }


@pytest.mark.parametrize(
    "arguments",
    [{"target": 0.0}, {"target": 1.0}, {"delta": 0.0}, {"delta": 1.0}, {"target": math.nan}],
)
def test_it_rejects_a_target_or_delta_outside_zero_to_one(arguments):
    with pytest.raises(ValueError):
        certify([sample(True)], **arguments)
    with pytest.raises(ValueError):
        certify([], **arguments)


def test_it_draws_the_curve_of_the_certified_rule_over_every_threshold():
    samples = [
        *[sample(True, answer=0.9) for _ in range(40)],
        *[sample(False, answer=0.9, signals={"split"}) for _ in range(2)],
        *[sample(i % 2 == 0, answer=0.5 + i / 100) for i in range(10)],
        sample(False, answer=0.3, signals={"split"}),
        sample(False, answer=None),
    ]
    outcome = certify(samples, signals=("split",))
    assert outcome.certified is not None
    rule = outcome.certified.rule
    # Two wrong splits at 0.9: only a rule that excludes splits certifies here.
    assert rule.source == "answer" and rule.absent == ("split",)
    thresholds = sorted({s.confidence["answer"] for s in samples} - {None})
    assert [point["threshold"] for point in outcome.curve] == thresholds
    for point in outcome.curve:
        assert set(point) == {"threshold", "coverage", "accuracy", "bound"}
        at = evaluate(Rule("answer", point["threshold"], rule.absent), samples, 0.1)
        assert point == {
            "threshold": at.rule.threshold,
            "coverage": at.coverage,
            "accuracy": at.accuracy,
            "bound": at.bound,
        }
    coverages = [point["coverage"] for point in outcome.curve]
    assert coverages == sorted(coverages, reverse=True)
    chosen = next(p for p in outcome.curve if p["threshold"] == rule.threshold)
    assert chosen["bound"] == outcome.certified.bound
    json.dumps(outcome.as_dict())


def test_it_draws_the_curve_of_the_best_rule_and_none_without_a_source():
    samples = [sample(True, answer=0.5 + i / 100) for i in range(15)] + [
        sample(False, answer=0.2) for _ in range(5)
    ]
    outcome = certify(samples)
    assert outcome.certified is None
    assert len(outcome.curve) == 16
    assert outcome.curve[0] == {
        "threshold": 0.2,
        "coverage": 1.0,
        "accuracy": 0.75,
        "bound": clopper_pearson_lower(15, 20, 0.1),
    }
    assert certify([sample(True, answer=0.9) for _ in range(30)]).curve == []


# --- certify against the plain search ------------------------------------------------


def search(samples, target, delta, sources, signals):
    """The choice as the rules state it, rule by rule over `candidate_rules`: `min` keeps
    the first of equals, and the candidates come with the absent sets in sorted order."""
    evaluated = [evaluate(r, samples, delta) for r in candidate_rules(samples, sources, signals)]
    rank = {None: -1, **{source: i for i, source in enumerate(sources)}}

    def tie(e):
        threshold = -1.0 if e.rule.threshold is None else e.rule.threshold
        return (len(e.rule.absent), rank[e.rule.source], threshold)

    qualifying = [e for e in evaluated if e.kept and e.bound >= target and not e.injections_kept]
    certified = min(qualifying, key=lambda e: (-e.kept, -e.bound, *tie(e)), default=None)
    pool = [e for e in evaluated if e.kept and not e.injections_kept] or [
        e for e in evaluated if e.kept
    ]
    best = min(pool, key=lambda e: (-e.bound, -e.kept, *tie(e)), default=None)
    return certified, best


def random_samples(rng, count, sources, signals, injection_rate=0.03):
    """Verdicts more often right the higher a hidden quality, confidences that follow it
    noisily and coarsely (so values repeat), signals that fire more on poor ones."""
    samples = []
    for _ in range(count):
        quality = rng.random()
        confidence = {}
        for source in sources:
            noisy = min(1.0, max(0.0, quality + rng.gauss(0, 0.15)))
            confidence[source] = None if rng.random() < 0.15 else round(noisy, 1)
        fired = frozenset(name for name in signals if rng.random() < 0.15 + 0.2 * (1 - quality))
        samples.append(
            Sample(
                right=rng.random() < 0.55 + 0.45 * quality,
                confidence=confidence,
                signals=fired,
                injection_approved=rng.random() < injection_rate,
            )
        )
    return samples


def test_it_chooses_as_the_plain_search_does_on_random_samples():
    sources = ("answer", "probe")
    signals = ("split", "late_change", "copied")
    certified_seen = nothing_seen = 0
    for seed in range(40):
        rng = random.Random(seed)
        samples = random_samples(rng, rng.choice((5, 30, 80, 150)), sources, signals)
        target = rng.choice((0.6, 0.75, 0.85, 0.9))
        delta = rng.choice((0.05, 0.1, 0.2))
        order = sources if seed % 2 else sources[::-1]
        outcome = certify(samples, target=target, delta=delta, sources=order, signals=signals)
        certified, best = search(samples, target, delta, order, signals)
        assert outcome.certified == certified, seed
        assert outcome.best == best, seed
        certified_seen += certified is not None
        nothing_seen += certified is None
    # The comparison covered both outcomes.
    assert certified_seen >= 10 and nothing_seen >= 5


def test_it_gives_json_ready_dictionaries():
    samples = [sample(True, answer=0.9) for _ in range(25)]
    outcome = certify(samples)
    data = json.loads(json.dumps(outcome.as_dict()))
    assert data["certified"]["rule"] == {"source": None, "threshold": None, "absent": []}
    assert data["certified"]["description"] == "every verdict"
    assert data["certified"]["kept"] == 25
    assert data["best"] == data["certified"]
    assert isinstance(outcome.certified, Evaluated)
