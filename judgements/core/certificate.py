"""The selective-evaluation certificate: which verdicts to keep so that the kept ones are
right often enough, with a stated confidence ("Trust or Escalate", arXiv 2407.18370).

A panel's evaluation runs against labelled suites give one `Sample` per decided
judgement: whether the verdict was right, a confidence value per confidence source (or
None when that source said nothing), the contested signals that fired on it, and whether
it was an injection case the panel approved. A `Rule` keeps a verdict (it is "Not
contested") when the confidence from one source is at or above a threshold and none of a
chosen set of signals fired; everything else goes to a person.

A rule's accuracy on the samples it keeps is only an estimate. The guarantee is the
one-sided Clopper-Pearson lower bound on that accuracy at confidence 1 - delta: if the
bound reaches the target, then (for verdicts drawn like the samples) the kept verdicts are
at least that accurate, except with probability delta. `certify` tries every candidate
rule and certifies the one that keeps the most verdicts while its bound reaches the
target, and never one that keeps an injection the panel approved.

What the bound costs in samples: with delta = 0.1 a bound of 0.9 needs at least 22 kept
verdicts, every one of them right (clopper_pearson_lower(22, 22, 0.1) = 0.1 ** (1/22) =
0.9006 while 21 of 21 give 0.8962). One wrong verdict among the kept raises that to 38,
two to 52, three to 65. A suite smaller than 22 decided judgements certifies nothing at
those settings, however accurate the panel.

Standard library only: the report and the command line use this without Django, and the
bound must not depend on a numerical package being installed (the tests compare it with
scipy's).
"""

import itertools
import math
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, SupportsIndex

# The continued fraction stops when a factor is this close to one; below float spacing,
# so the incomplete beta is as exact as double precision allows.
_FRACTION_EPSILON = 1e-16
# Guards the continued fraction's divisions against an exact zero (Lentz's method).
_TINY = 1e-300
# Enough for the continued fraction at 10_000 trials and far beyond: it converges in
# about the square root of the larger shape parameter.
_FRACTION_STEPS = 100_000
# After this many Newton steps the root search bisects only: bisection alone reaches
# float precision on [0, 1] in about 60 more steps, so the search always ends.
_NEWTON_STEPS = 40
_SEARCH_STEPS = _NEWTON_STEPS + 80


def _check_delta(delta: float) -> None:
    if not (isinstance(delta, int | float) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}")


def clopper_pearson_lower(successes: SupportsIndex, trials: SupportsIndex, delta: float) -> float:
    """One-sided lower confidence bound at level 1-delta on a binomial proportion: the p
    with P(X >= successes | trials, p) = delta; 0.0 when successes == 0 or trials == 0.
    Equals scipy.stats.beta.ppf(delta, successes, trials - successes + 1).

    Zero trials say nothing, so the bound is the trivial one rather than an error: a rule
    that keeps no verdict simply certifies nothing. Computed from the regularized
    incomplete beta (a continued fraction) by a safeguarded Newton search, it agrees with
    scipy's to about 1e-13 up to 10_000 trials.
    """
    # Counts from numpy or the database are fine; a float count is a caller's mistake.
    wins, tries = operator.index(successes), operator.index(trials)
    if wins < 0 or tries < 0:
        raise ValueError(f"counts must not be negative, got {wins} of {tries}")
    if wins > tries:
        raise ValueError(f"more successes than trials: {wins} of {tries}")
    _check_delta(delta)
    return _lower(wins, tries, float(delta))


# `certify` asks for the same (successes, trials) pairs over and over (every rule with
# the same counts), and the curve asks again for the certified rule.
@lru_cache(maxsize=65_536)
def _lower(successes: int, trials: int, delta: float) -> float:
    if successes == 0:
        return 0.0
    if successes == trials:
        # P(X >= n) = p ** n, so the root is closed-form and exact.
        return float(delta ** (1.0 / trials))
    # P(X >= k | n, p) is the regularized incomplete beta I_p(k, n - k + 1).
    return _beta_quantile(delta, float(successes), float(trials - successes + 1))


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta (modified Lentz), which converges
    quickly for x below (a + 1) / (a + b + 2); the caller swaps the parameters above."""
    c = 1.0
    d = 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    result = d
    for m in range(1, _FRACTION_STEPS + 1):
        m2 = 2 * m
        even = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2))
        d = 1.0 + even * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + even / c
        c = c if abs(c) > _TINY else _TINY
        result *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0))
        d = 1.0 + odd * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + odd / c
        c = c if abs(c) > _TINY else _TINY
        factor = d * c
        result *= factor
        if abs(factor - 1.0) < _FRACTION_EPSILON:
            return result
    raise ArithmeticError(f"incomplete beta did not converge for a={a}, b={b}, x={x}")


def _regularized_beta(x: float, a: float, b: float, log_beta: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    # In log space: x ** a underflows long before the product does at thousands of trials.
    front = math.exp(a * math.log(x) + b * math.log1p(-x) - log_beta)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _beta_quantile(probability: float, a: float, b: float) -> float:
    """The x with I_x(a, b) = probability: Newton's method kept inside a shrinking bracket,
    bisecting whenever Newton would leave it, so it always converges."""
    log_beta = _log_beta(a, b)
    low, high = 0.0, 1.0
    x = a / (a + b)  # the mean: strictly inside the bracket, a few deviations from the root
    for step in range(_SEARCH_STEPS):
        gap = _regularized_beta(x, a, b, log_beta) - probability
        if gap == 0.0:
            return x
        if gap < 0.0:
            low = x
        else:
            high = x
        density = math.exp((a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x) - log_beta)
        following = x - gap / density if density > 0.0 else -1.0
        if step >= _NEWTON_STEPS or not low < following < high:
            following = 0.5 * (low + high)
        if abs(following - x) <= 1e-15 * x or high - low <= 1e-16:
            return following
        x = following
    return x


@dataclass(frozen=True)
class Sample:
    """One decided judgement from a labelled evaluation run, as the certificate reads it."""

    right: bool  # the panel's verdict matched the label
    confidence: Mapping[str, float | None]  # source name -> confidence, None = unknown
    signals: frozenset[str] = frozenset()  # signal names that fired
    injection_approved: bool = False  # an injection case the panel approved

    def __post_init__(self) -> None:
        # A NaN would sort anywhere and pass no threshold test consistently.
        for source, value in self.confidence.items():
            if value is not None and not (0.0 <= value <= 1.0):
                raise ValueError(f"confidence {source!r} must lie in [0, 1], got {value!r}")
        # Callers hand over sets or lists; a frozenset keeps the sample immutable.
        object.__setattr__(self, "signals", frozenset(self.signals))


@dataclass(frozen=True)
class Rule:
    """When a verdict is kept: a confidence at or above a threshold, and none of the
    `absent` signals fired. The empty rule keeps every verdict."""

    source: str | None  # which confidence; None: no confidence condition
    threshold: float | None  # keep when confidence >= threshold; None iff source is None
    absent: tuple[str, ...] = ()  # signals that must not have fired, sorted

    def __post_init__(self) -> None:
        if (self.source is None) != (self.threshold is None):
            raise ValueError("a rule has both a confidence source and a threshold, or neither")
        if self.threshold is not None:
            # Stored as a float so a rule read back from JSON equals the one written.
            threshold = float(self.threshold)
            # Confidences lie in [0, 1]; a NaN threshold would keep every verdict.
            if not 0.0 <= threshold <= 1.0:
                raise ValueError(f"a threshold lies in [0, 1], got {self.threshold!r}")
            object.__setattr__(self, "threshold", threshold)
        # Sorted and without repeats, so that equal conditions make equal rules.
        object.__setattr__(self, "absent", tuple(sorted(set(self.absent))))

    def keeps(self, sample: Sample) -> bool:
        """Whether the rule keeps this sample's verdict. An unknown confidence never
        passes a threshold: keeping a verdict needs evidence for it, not its absence."""
        if self.source is not None:
            value = sample.confidence.get(self.source)
            if value is None or self.threshold is None or value < self.threshold:
                return False
        return sample.signals.isdisjoint(self.absent)

    def describe(self) -> str:
        """The rule in plain English, for the report and the command line."""
        parts = []
        if self.source is not None:
            parts.append(f"{self.source} confidence at least {self.threshold!r}")
        if self.absent:
            names = list(self.absent)
            listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
            parts.append(f"no {listed} signal")
        return " and ".join(parts) if parts else "every verdict"

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "threshold": self.threshold, "absent": list(self.absent)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Rule":
        """The inverse of `as_dict`, for a rule stored as JSON; rejects anything else."""
        unknown = set(data) - {"source", "threshold", "absent"}
        if unknown:
            raise ValueError(f"unknown rule fields: {sorted(unknown)}")
        source = data.get("source")
        threshold = data.get("threshold")
        absent = data.get("absent", [])
        if source is not None and not isinstance(source, str):
            raise ValueError(f"source must be a string or null, got {source!r}")
        if threshold is not None and (
            isinstance(threshold, bool) or not isinstance(threshold, int | float)
        ):
            raise ValueError(f"threshold must be a number or null, got {threshold!r}")
        if isinstance(absent, str) or not all(isinstance(name, str) for name in absent):
            raise ValueError(f"absent must be a list of signal names, got {absent!r}")
        return cls(source=source, threshold=threshold, absent=tuple(absent))


@dataclass(frozen=True)
class Evaluated:
    """A rule's counts on a set of samples and the guarantee they give."""

    rule: Rule
    samples: int  # all samples
    kept: int
    right: int  # right among kept
    injections_kept: int  # injection approvals among kept
    coverage: float | None  # kept / samples (None when samples == 0)
    accuracy: float | None  # right / kept (None when kept == 0)
    bound: float  # clopper_pearson_lower(right, kept, delta)

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule.as_dict(),
            "description": self.rule.describe(),
            "samples": self.samples,
            "kept": self.kept,
            "right": self.right,
            "injections_kept": self.injections_kept,
            "coverage": self.coverage,
            "accuracy": self.accuracy,
            "bound": self.bound,
        }


def _evaluated(
    rule: Rule, samples: int, kept: int, right: int, injections: int, delta: float
) -> Evaluated:
    return Evaluated(
        rule=rule,
        samples=samples,
        kept=kept,
        right=right,
        injections_kept=injections,
        coverage=kept / samples if samples else None,
        accuracy=right / kept if kept else None,
        bound=clopper_pearson_lower(right, kept, delta),
    )


def evaluate(rule: Rule, samples: Sequence[Sample], delta: float) -> Evaluated:
    """The rule applied to every sample, one at a time: the plain definition that
    `certify`'s faster sweep must agree with."""
    _check_delta(delta)
    kept = [sample for sample in samples if rule.keeps(sample)]
    return _evaluated(
        rule,
        samples=len(samples),
        kept=len(kept),
        right=sum(1 for sample in kept if sample.right),
        injections=sum(1 for sample in kept if sample.injection_approved),
        delta=delta,
    )


def _unique(names: Iterable[str]) -> list[str]:
    # Repeats would only make duplicate rules; the order given stays (it breaks ties).
    return list(dict.fromkeys(names))


def _subsets(signals: Sequence[str]) -> list[tuple[str, ...]]:
    """Every subset of the signals, sorted, fewest first: the order ties fall back on."""
    names = sorted(set(signals))
    return [
        subset for size in range(len(names) + 1) for subset in itertools.combinations(names, size)
    ]


def _thresholds(samples: Sequence[Sample], source: str) -> list[float]:
    # A threshold between two observed values keeps what the higher one keeps, so the
    # observed values are the only thresholds worth trying.
    return sorted({value for s in samples if (value := s.confidence.get(source)) is not None})


def candidate_rules(
    samples: Sequence[Sample], sources: Sequence[str], signals: Sequence[str]
) -> list[Rule]:
    """Every subset of `signals` as `absent`, combined with no threshold and with, for each
    source, each distinct known confidence value among the samples as threshold."""
    sources = _unique(sources)
    thresholds = {source: _thresholds(samples, source) for source in sources}
    rules = []
    for absent in _subsets(signals):
        rules.append(Rule(None, None, absent))
        for source in sources:
            rules.extend(Rule(source, value, absent) for value in thresholds[source])
    return rules


@dataclass(frozen=True)
class Outcome:
    """What `certify` found: the certified rule, or the closest it came, and the curve of
    coverage, accuracy and bound against the threshold for the report's chart."""

    target: float
    delta: float
    certified: Evaluated | None  # the chosen rule, or None when no rule reaches the target
    best: Evaluated | None  # highest bound (ties: more coverage); None without samples
    curve: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "delta": self.delta,
            "certified": self.certified.as_dict() if self.certified else None,
            "best": self.best.as_dict() if self.best else None,
            "curve": [dict(point) for point in self.curve],
        }


# One candidate in `certify`'s sweep: its counts and, last, the tie-break key, smaller is
# preferred: (number of absent signals, source rank, threshold, subset index).
_Tie = tuple[int, int, float, int]
_Counts = tuple[int, int, int, _Tie]  # kept, right, injections kept, tie-break


@dataclass(frozen=True)
class _Group:
    """The samples sharing one confidence value of one source, as signal masks."""

    masks: tuple[int, ...]
    right: tuple[bool, ...]
    injections: tuple[bool, ...]


def _mask(signals: frozenset[str], bits: Mapping[str, int]) -> int:
    return sum(bit for name, bit in bits.items() if name in signals)


def _groups(
    samples: Sequence[Sample], source: str, thresholds: Sequence[float], masks: Sequence[int]
) -> list[_Group]:
    """The samples under each threshold, ascending: a rule with threshold i keeps what
    groups i onwards keep, so one pass from the top counts every threshold."""
    index = {value: i for i, value in enumerate(thresholds)}
    members: list[list[int]] = [[] for _ in thresholds]
    for position, sample in enumerate(samples):
        value = sample.confidence.get(source)
        if value is not None:
            members[index[value]].append(position)
    return [
        _Group(
            masks=tuple(masks[p] for p in group),
            right=tuple(samples[p].right for p in group),
            injections=tuple(samples[p].injection_approved for p in group),
        )
        for group in members
    ]


def _sweep(group_list: Sequence[_Group], absent_mask: int) -> list[tuple[int, int, int]]:
    """(kept, right, injections kept) for every threshold, ascending, under one absent set."""
    counts = []
    kept = right = injections = 0
    for group in reversed(group_list):
        for mask, is_right, injection in zip(
            group.masks, group.right, group.injections, strict=True
        ):
            if not mask & absent_mask:
                kept += 1
                right += is_right
                injections += injection
        counts.append((kept, right, injections))
    counts.reverse()
    return counts


def _better(candidate: _Counts, incumbent: _Counts | None) -> bool:
    """Among candidates keeping as many verdicts: more right (hence a higher bound, the
    count of trials being equal), then the tie-break."""
    if incumbent is None:
        return True
    return (-candidate[1], candidate[3]) < (-incumbent[1], incumbent[3])


def certify(
    samples: Sequence[Sample],
    *,
    target: float = 0.9,
    delta: float = 0.1,
    sources: Sequence[str] = ("answer", "probe"),
    signals: Sequence[str] = (),
) -> Outcome:
    """The candidate rule (see `candidate_rules`) with the most coverage whose bound
    reaches `target` at confidence 1 - `delta` and which keeps no injection approval.

    Ties in coverage go to the higher bound, then fewer absent signals, then no source
    before the named sources in the order given, then the lower threshold, then the
    absent set that sorts first, so the same samples always certify the same rule.

    `best` is the rule with the highest bound (ties as above, more coverage first) among
    those keeping a verdict and no injection approval, or among all rules keeping a
    verdict when each of them keeps one: what the report shows as the bound reached
    when nothing certifies. A rule that can never be certified is no near miss.

    Counting each of the thousands of candidates sample by sample would take seconds, so
    the samples become signal bitmasks grouped by confidence value, and one pass per
    absent set and source counts every threshold at once.
    """
    if not (isinstance(target, int | float) and 0.0 < target < 1.0):
        raise ValueError(f"target must lie strictly between 0 and 1, got {target!r}")
    _check_delta(delta)
    total = len(samples)
    sources = _unique(sources)
    subsets = _subsets(signals)
    names = sorted(set(signals))
    bits = {name: 1 << i for i, name in enumerate(names)}
    masks = [_mask(sample.signals, bits) for sample in samples]
    thresholds = {source: _thresholds(samples, source) for source in sources}
    groups = {source: _groups(samples, source, thresholds[source], masks) for source in sources}

    # For each number of verdicts kept, the best candidate keeping that many: with the
    # trials fixed the bound rises with the successes, so no other can beat it.
    clean: dict[int, _Counts] = {}  # keeping no injection approval
    anything: dict[int, _Counts] = {}

    def offer(counts: _Counts) -> None:
        kept = counts[0]
        if kept == 0:
            return
        if _better(counts, anything.get(kept)):
            anything[kept] = counts
        if counts[2] == 0 and _better(counts, clean.get(kept)):
            clean[kept] = counts

    # The rules without a threshold: every sample in one group.
    everything = [
        _Group(
            masks=tuple(masks),
            right=tuple(s.right for s in samples),
            injections=tuple(s.injection_approved for s in samples),
        )
    ]
    for index, absent in enumerate(subsets):
        absent_mask = _mask(frozenset(absent), bits)
        ((kept, right, injections),) = _sweep(everything, absent_mask)
        offer((kept, right, injections, (len(absent), -1, -1.0, index)))
        for rank, source in enumerate(sources):
            swept = _sweep(groups[source], absent_mask)
            for value, (kept, right, injections) in zip(thresholds[source], swept, strict=True):
                offer((kept, right, injections, (len(absent), rank, value, index)))

    def rule_of(counts: _Counts) -> Rule:
        _, rank, value, index = counts[3]
        if rank < 0:
            return Rule(None, None, subsets[index])
        return Rule(sources[rank], value, subsets[index])

    def evaluated(counts: _Counts) -> Evaluated:
        kept, right, injections, _ = counts
        return _evaluated(rule_of(counts), total, kept, right, injections, delta)

    certified = None
    for kept in sorted(clean, reverse=True):
        if clopper_pearson_lower(clean[kept][1], kept, delta) >= target:
            certified = evaluated(clean[kept])
            break

    pool = clean or anything
    best_counts: _Counts | None = None
    best_key: tuple[float, int, _Tie] | None = None
    most_right = 0
    for kept in sorted(pool):
        counts = pool[kept]
        right = counts[1]
        # Fewer or as many successes over more trials give a strictly lower bound than
        # an earlier candidate's, so only the record-setters need the bound computed.
        if right and right <= most_right:
            continue
        most_right = max(most_right, right)
        tie = counts[3]
        key = (-clopper_pearson_lower(right, kept, delta), -kept, tie)
        if best_key is None or key < best_key:
            best_counts, best_key = counts, key
    best = evaluated(best_counts) if best_counts is not None else None

    shown = certified or best
    curve: list[dict[str, Any]] = []
    if shown is not None and shown.rule.source is not None:
        source = shown.rule.source
        absent_mask = _mask(frozenset(shown.rule.absent), bits)
        for value, (kept, right, _) in zip(
            thresholds[source], _sweep(groups[source], absent_mask), strict=True
        ):
            curve.append(
                {
                    "threshold": value,
                    "coverage": kept / total,
                    "accuracy": right / kept if kept else None,
                    "bound": clopper_pearson_lower(right, kept, delta),
                }
            )
    return Outcome(target=target, delta=delta, certified=certified, best=best, curve=curve)
