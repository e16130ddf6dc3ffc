"""The cascade's certificate (judgements/core/cascade.py): over 300 synthetic suites per
cascade (tests/support/cascade_simulation.py), the rate at which a certified cascade's
true kept accuracy lies below its promise stays within delta, allowing for the
simulation's own error; the null cascade ("flat+flat": no rule of either level reaches
the target) is what the issue names. It still certifies where a level can earn it, and
its report says per level what it kept, how right, at what cost and what people get."""

import math

import pytest

from judgements.core import cascade
from judgements.core.kept_verdicts import Sample
from tests.support.cascade_simulation import CASCADES, tally

TARGET, DELTA, SUITES = 0.9, 0.1, 300


def allowed(suites: int) -> float:
    return DELTA * suites + 3 * math.sqrt(suites * DELTA * (1 - DELTA))


@pytest.mark.parametrize("name", sorted(CASCADES))
def test_a_certified_cascade_keeps_its_promise_in_all_but_delta_of_suites(name):
    found = tally(name, suites=SUITES, size=96, seed=21)
    assert found.broken <= allowed(SUITES), found


def test_the_null_cascade_almost_never_certifies():
    found = tally("flat+flat", suites=SUITES, size=96, seed=22)
    assert found.broken_rate <= DELTA, found


def test_it_certifies_where_the_stronger_level_earns_it():
    # The strong level's telling signal leaves 92.7 % right without it: a cascade of 256
    # cases certifies it in some suites, and then keeps a fair share.
    found = tally("flat+telling", suites=100, size=256, seed=23)
    assert found.certified >= 10 and found.coverage > 0.02, found


def sample(right: bool, confidence: float) -> Sample:
    return Sample(right=right, confidence={"probe": confidence})


def test_its_report_replays_the_cascade_level_by_level():
    # Level 1 is right and sure on the first 150 cases, wrong and unsure on the rest;
    # level 2 is right on every case. Level 1 keeps its sure verdicts, level 2 the rest.
    cases = [f"c{i}" for i in range(300)]
    first = {c: sample(i < 150, 0.9 if i < 150 else 0.1) for i, c in enumerate(cases)}
    second = {c: sample(True, 0.8) for c in cases}
    costs = [
        {c: cascade.Cost(100, 1.0) for c in cases},
        {c: cascade.Cost(1000, 10.0) for c in cases},
    ]
    found = cascade.certify([first, second], target=0.9, delta=0.1, sources=("probe",), costs=costs)
    report = found.report
    assert found.certified and report["guarantee"] == 0.9
    assert report["delta_per_level"] == pytest.approx(0.05)
    one, two = report["levels"]
    tested = len(report["test"])
    assert one["figures"]["reached"] == tested and one["figures"]["accuracy"] == 1.0
    assert two["figures"]["reached"] == one["passed_on_to"] > 0
    assert two["figures"]["tokens"] == 1000 * two["figures"]["reached"]
    assert report["kept"]["kept"] == tested and report["people"] == 0
    assert report["kept"]["tokens"] == 100 * tested + 1000 * two["figures"]["reached"]
    assert report["strongest_alone"]["tokens"] == 1000 * tested
    assert report["strongest_alone"]["accuracy"] == 1.0


def test_a_level_that_certifies_nothing_passes_everything_on():
    cases = [f"c{i}" for i in range(90)]
    first = {c: sample(i % 2 == 0, 0.5) for i, c in enumerate(cases)}
    second = {c: sample(i % 3 == 0, 0.5) for i, c in enumerate(cases)}
    found = cascade.certify([first, second], sources=("probe",))
    assert found.rules == [None, None] and not found.certified
    assert found.report["people"] == len(found.report["test"])
    assert found.report["guarantee"] is None


def test_it_refuses_a_cascade_of_no_level():
    with pytest.raises(ValueError):
        cascade.certify([])
