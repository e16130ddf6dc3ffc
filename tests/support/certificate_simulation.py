"""Synthetic labelled suites drawn from known distributions, for checking that a
certificate keeps its promise: for each distribution the true accuracy of the verdicts
any rule keeps is known (read off a large population drawn once), so a certified rule
can be checked against the bound its certificate states.

Used by tests/judgements/core/test_certificate_validity.py and
bench/certificate_validity.py.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy
from numpy.random import Generator

from judgements.core.certificate import Rule, Sample

SOURCES = ("answer", "probe")
SIGNALS = ("tell", "noise-1", "noise-2")


@dataclass(frozen=True)
class Drawn:
    """Verdicts as arrays: right or not, the two confidences (two decimals, so ties
    happen as they do with a provider's log-probabilities), and one column per signal."""

    right: numpy.ndarray
    answer: numpy.ndarray
    probe: numpy.ndarray
    signals: numpy.ndarray  # bool, one column per name in SIGNALS

    def samples(self) -> list[Sample]:
        return [
            Sample(
                right=bool(self.right[i]),
                confidence={"answer": float(self.answer[i]), "probe": float(self.probe[i])},
                signals=frozenset(name for j, name in enumerate(SIGNALS) if self.signals[i, j]),
            )
            for i in range(len(self.right))
        ]

    def kept_accuracy(self, rule: Rule) -> float | None:
        """The accuracy of what the rule keeps in this (large) population."""
        kept = numpy.ones(len(self.right), dtype=bool)
        if rule.source is not None and rule.threshold is not None:
            kept &= (self.answer if rule.source == "answer" else self.probe) >= rule.threshold
        for name in rule.absent:
            kept &= ~self.signals[:, SIGNALS.index(name)]
        return float(self.right[kept].mean()) if kept.any() else None

    def kept_share(self, rule: Rule) -> float:
        kept = numpy.ones(len(self.right), dtype=bool)
        if rule.source is not None and rule.threshold is not None:
            kept &= (self.answer if rule.source == "answer" else self.probe) >= rule.threshold
        for name in rule.absent:
            kept &= ~self.signals[:, SIGNALS.index(name)]
        return float(kept.mean())


def _confidence(random: Generator, size: int) -> numpy.ndarray:
    return numpy.round(random.uniform(0.0, 1.0, size), 2)


def _signals(random: Generator, right: numpy.ndarray, tells: tuple[float, float]) -> numpy.ndarray:
    """`tell` fires with the first probability on a wrong verdict and the second on a
    right one; the noise signals fire on three verdicts in ten, whatever the verdict."""
    size = len(right)
    tell = random.uniform(size=size) < numpy.where(right, tells[1], tells[0])
    noise = random.uniform(size=(size, 2)) < 0.3
    return numpy.column_stack([tell, noise])


def flat(random: Generator, size: int) -> Drawn:
    """Every verdict right with probability 0.85, whatever its confidence or signals:
    every rule's true kept accuracy is 0.85, so certifying 0.9 is always wrong."""
    right = random.uniform(size=size) < 0.85
    return Drawn(
        right,
        _confidence(random, size),
        _confidence(random, size),
        _signals(random, right, (0.3, 0.3)),
    )


def rising(random: Generator, size: int) -> Drawn:
    """Accuracy rises with the probe's confidence (0.55 at 0, 1.0 at 1); the answer's
    confidence and the signals carry nothing."""
    probe = _confidence(random, size)
    right = random.uniform(size=size) < 0.55 + 0.45 * probe
    return Drawn(right, _confidence(random, size), probe, _signals(random, right, (0.3, 0.3)))


def edge(random: Generator, size: int) -> Drawn:
    """Accuracy rises slowly with the probe (0.80 at 0, 0.92 at 1): only the strictest
    thresholds keep verdicts 90 % right, and barely, the hardest case for a bound."""
    probe = _confidence(random, size)
    right = random.uniform(size=size) < 0.80 + 0.12 * probe
    return Drawn(right, _confidence(random, size), probe, _signals(random, right, (0.3, 0.3)))


def telling(random: Generator, size: int) -> Drawn:
    """Right with probability 0.8; the `tell` signal fires on 70 % of the wrong verdicts
    and 5 % of the right ones (without it, 92.7 % are right); confidences carry nothing."""
    right = random.uniform(size=size) < 0.8
    return Drawn(
        right,
        _confidence(random, size),
        _confidence(random, size),
        _signals(random, right, (0.7, 0.05)),
    )


DISTRIBUTIONS: dict[str, Callable[[Generator, int], Drawn]] = {
    "flat": flat,
    "rising": rising,
    "edge": edge,
    "telling": telling,
}


@dataclass(frozen=True)
class Tally:
    """Over many suites of one distribution: how often a rule was certified, how often
    the certified rule's true kept accuracy was below the stated bound, and the mean share
    of verdicts the certified rules keep in the population (0 for a suite that certified
    nothing)."""

    suites: int
    certified: int
    broken: int
    coverage: float

    @property
    def broken_rate(self) -> float:
        return self.broken / self.suites


Certifier = Callable[[Sequence[Sample]], tuple[Rule, float] | None]


def tally(distribution: str, certifier: Certifier, *, suites: int, size: int, seed: int) -> Tally:
    """Draw `suites` suites of `size` verdicts and check each certified rule (with the
    bound its certificate states) against the population's truth."""
    draw = DISTRIBUTIONS[distribution]
    population = draw(numpy.random.default_rng([seed, 1]), 400_000)
    random = numpy.random.default_rng([seed, 2])
    certified = broken = 0
    coverage = 0.0
    for _ in range(suites):
        found = certifier(draw(random, size).samples())
        if found is None:
            continue
        rule, stated = found
        certified += 1
        truth = population.kept_accuracy(rule)
        broken += truth is None or truth < stated
        coverage += population.kept_share(rule)
    return Tally(suites, certified, broken, coverage / suites)
