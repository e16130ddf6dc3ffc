"""Synthetic labelled suites for an escalation cascade (judgements/core/cascade.py): each
level's verdicts drawn from one of the single panel's known distributions
(tests/support/certificate_simulation.py), case by case, so that the true accuracy of the
verdicts a certified cascade keeps is known (read off a large population drawn once) and
can be checked against its promise.

Used by tests/judgements/core/test_cascade.py and bench/cascade_validity.py.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy

from judgements.core import cascade
from judgements.core.kept_verdicts import Rule, Sample
from tests.support.certificate_simulation import DISTRIBUTIONS, SIGNALS, SOURCES, Drawn

# Cascades by their levels' distributions, cheapest first. "flat+flat" is the null of the
# issue's simulation: every verdict of either level is 85 % right whatever it says, so a
# certified cascade always breaks a 90 % promise.
CASCADES: dict[str, tuple[str, ...]] = {
    "flat+flat": ("flat", "flat"),
    "edge+edge": ("edge", "edge"),
    "rising+edge": ("rising", "edge"),
    "flat+telling": ("flat", "telling"),
    "rising+rising+edge": ("rising", "rising", "edge"),
}


def by_case(drawn: Drawn) -> dict[str, Sample]:
    return {f"case {i}": sample for i, sample in enumerate(drawn.samples())}


def keeps(drawn: Drawn, rule: Rule | None) -> numpy.ndarray:
    kept = numpy.zeros(len(drawn.right), dtype=bool)
    if rule is None:
        return kept
    kept |= True
    if rule.source is not None and rule.threshold is not None:
        kept &= (drawn.answer if rule.source == "answer" else drawn.probe) >= rule.threshold
    for name in rule.absent:
        kept &= ~drawn.signals[:, SIGNALS.index(name)]
    return kept


def kept_accuracy(
    population: Sequence[Drawn], rules: Sequence[Rule | None]
) -> tuple[float | None, float]:
    """The true accuracy and share of what the cascade's rules keep in the population."""
    open_ = numpy.ones(len(population[0].right), dtype=bool)
    kept = right = 0
    for drawn, rule in zip(population, rules, strict=True):
        here = open_ & keeps(drawn, rule)
        kept += int(here.sum())
        right += int(drawn.right[here].sum())
        open_ &= ~here
    return (right / kept if kept else None), kept / len(open_)


@dataclass(frozen=True)
class Tally:
    suites: int
    certified: int
    broken: int  # certified, and the cascade's true kept accuracy below the target
    coverage: float  # the mean true share kept (0 for a suite that certified nothing)

    @property
    def broken_rate(self) -> float:
        return self.broken / self.suites


def tally(
    name: str, *, suites: int, size: int, seed: int, target: float = 0.9, delta: float = 0.1
) -> Tally:
    draws = [DISTRIBUTIONS[level] for level in CASCADES[name]]
    population = [
        draw(numpy.random.default_rng([seed, 1, i]), 400_000) for i, draw in enumerate(draws)
    ]
    random = numpy.random.default_rng([seed, 2])
    certified = broken = 0
    coverage = 0.0
    for _ in range(suites):
        levels = [by_case(draw(random, size)) for draw in draws]
        found = cascade.certify(
            levels, target=target, delta=delta, sources=SOURCES, signals=SIGNALS
        )
        if not found.certified:
            continue
        certified += 1
        truth, share = kept_accuracy(population, found.rules)
        broken += truth is None or truth < target
        coverage += share
    return Tally(suites, certified, broken, coverage / suites)
