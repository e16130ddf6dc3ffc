"""Does the certificate keep its promise? Over 1,000 synthetic suites of each of four
known distributions (tests/support/certificate_simulation.py: accuracy independent of
confidence, rising with it, barely reaching the target, and a signal that tells wrong
verdicts apart beside signals that tell nothing), the rate at which a certified rule's
true kept accuracy lies below the bound its certificate states must stay within delta,
allowing for the simulation's own error. The search this replaced, which stated the
winning rule's own bound after trying thousands, broke it in 18 % (flat) to 30 % (edge)
of suites at these settings (bench/certificate_validity.py --against 76cc4d7)."""

import math

import pytest

from judgements.core import certificate
from tests.support.certificate_simulation import DISTRIBUTIONS, SIGNALS, SOURCES, tally

TARGET, DELTA, SUITES = 0.9, 0.1, 1000


def shipped(samples):
    outcome = certificate.certify(
        samples, target=TARGET, delta=DELTA, sources=SOURCES, signals=SIGNALS
    )
    if outcome.certified is None or outcome.guarantee is None:
        return None
    return outcome.certified.rule, outcome.guarantee


def allowed(suites: int) -> float:
    """delta's share of the suites and three standard errors of a binomial count."""
    return DELTA * suites + 3 * math.sqrt(suites * DELTA * (1 - DELTA))


@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_a_certified_rule_is_as_accurate_as_it_promises_in_all_but_delta_of_suites(
    distribution,
):
    found = tally(distribution, shipped, suites=SUITES, size=64, seed=11)
    assert found.broken <= allowed(SUITES), found


def test_it_still_certifies_where_a_signal_tells_wrong_verdicts_apart():
    # Valid and useless would be certifying nothing: without the telling signal 92.7 % of
    # verdicts are right, and at 128 verdicts a suite in ten certifies it, keeping ~75 %.
    found = tally("telling", shipped, suites=300, size=128, seed=12)
    assert found.certified >= 30 and found.coverage > 0.05, found
