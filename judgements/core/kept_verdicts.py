"""Which verdicts a rule keeps, and how right they are: a labelled verdict as a `Sample`,
a `Rule` (a confidence at or above a threshold, and no signal of a chosen set), its counts
on samples (`Evaluated`), and the Clopper-Pearson bound and interval that say what those
counts are worth. The marks read rules (judgements/core/contested.py); certificates
choose and test them (judgements/core/certificate.py).

The bound is scipy's beta quantile, the numerical library's (the tests hold it to scipy's
binomial test), not a hand-written one.
"""

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import SupportsIndex

# typing_extensions: pydantic reads RuleFields in the answers (outcome/story_answers.py), on 3.11.
from typing_extensions import TypedDict


def check_delta(delta: float) -> None:
    if not (isinstance(delta, int | float) and 0.0 < delta < 1.0):
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}")


def clopper_pearson_lower(successes: SupportsIndex, trials: SupportsIndex, delta: float) -> float:
    """One-sided lower confidence bound at level 1-delta on a binomial proportion: the p
    with P(X >= successes | trials, p) = delta; 0.0 when successes == 0 or trials == 0.

    Zero trials say nothing, so the bound is the trivial one rather than an error: a rule
    that keeps no verdict simply certifies nothing."""
    # Counts from numpy or the database are fine; a float count is a caller's mistake.
    wins, tries = operator.index(successes), operator.index(trials)
    if wins < 0 or tries < 0:
        raise ValueError(f"counts must not be negative, got {wins} of {tries}")
    if wins > tries:
        raise ValueError(f"more successes than trials: {wins} of {tries}")
    check_delta(delta)
    return _lower(wins, tries, float(delta))


def interval(successes: SupportsIndex, trials: SupportsIndex, delta: float) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval at confidence 1 - delta: how a certificate's
    rule did on fresh labelled cases, reported with its own uncertainty."""
    wins, tries = operator.index(successes), operator.index(trials)
    low = clopper_pearson_lower(wins, tries, delta / 2)
    high = 1.0 - clopper_pearson_lower(tries - wins, tries, delta / 2) if tries else 1.0
    return low, high


# The selection asks for the same (successes, trials) pairs over and over.
@lru_cache(maxsize=65_536)
def _lower(successes: int, trials: int, delta: float) -> float:
    if successes == 0:
        return 0.0
    if successes == trials:
        # P(X >= n) = p ** n: closed-form and exact, where the quantile is within an ulp.
        return float(delta ** (1.0 / trials))
    # Imported here: scipy.stats takes half a second to import, every process loads this
    # module through the models, and only certifying and reports compute a bound.
    from scipy import stats

    # P(X >= k | n, p) is the regularized incomplete beta I_p(k, n - k + 1).
    return float(stats.beta.ppf(delta, successes, trials - successes + 1))


@dataclass(frozen=True)
class Sample:
    """One decided judgement from a labelled evaluation run, as the certificate reads it.

    `key` names it (its run, case and repeat: the split is recomputed from the keys);
    `case` groups the repeats of one case, which land on the same side of the split."""

    right: bool  # the panel's verdict matched the label
    confidence: Mapping[str, float | None]  # source name -> confidence, None = unknown
    signals: frozenset[str] = frozenset()  # signal names that fired
    injection_approved: bool = False  # an injection case the panel approved
    key: str = ""
    case: str = ""

    def __post_init__(self) -> None:
        # A NaN would sort anywhere and pass no threshold test consistently.
        for source, value in self.confidence.items():
            if value is not None and not (0.0 <= value <= 1.0):
                raise ValueError(f"confidence {source!r} must lie in [0, 1], got {value!r}")
        # Callers hand over sets or lists; a frozenset keeps the sample immutable.
        object.__setattr__(self, "signals", frozenset(self.signals))


class RuleFields(TypedDict):
    """A rule as stored (Rule.as_dict): a certificate's, a cascade level's."""

    source: str | None
    threshold: float | None
    absent: list[str]


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

    def as_dict(self) -> RuleFields:
        return {"source": self.source, "threshold": self.threshold, "absent": list(self.absent)}

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> "Rule":
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
        if not isinstance(absent, list) or not all(isinstance(name, str) for name in absent):
            raise ValueError(f"absent must be a list of signal names, got {absent!r}")
        return cls(source=source, threshold=threshold, absent=tuple(absent))


@dataclass(frozen=True)
class Evaluated:
    """A rule's counts on a set of samples, and that rule's own Clopper-Pearson bound."""

    rule: Rule
    samples: int  # all samples
    kept: int
    right: int  # right among kept
    injections_kept: int  # injection approvals among kept
    coverage: float | None  # kept / samples (None when samples == 0)
    accuracy: float | None  # right / kept (None when kept == 0)
    bound: float  # clopper_pearson_lower(right, kept, delta)

    def as_dict(self) -> "EvaluatedFields":
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


class EvaluatedFields(TypedDict):
    """A rule's counts as a certificate stores and reports them (Evaluated.as_dict)."""

    rule: RuleFields
    description: str
    samples: int
    kept: int
    right: int
    injections_kept: int
    coverage: float | None
    accuracy: float | None
    bound: float


def evaluate(rule: Rule, samples: Sequence[Sample], delta: float) -> Evaluated:
    """The rule applied to every sample."""
    check_delta(delta)
    kept = [sample for sample in samples if rule.keeps(sample)]
    right = sum(1 for sample in kept if sample.right)
    return Evaluated(
        rule=rule,
        samples=len(samples),
        kept=len(kept),
        right=right,
        injections_kept=sum(1 for sample in kept if sample.injection_approved),
        coverage=len(kept) / len(samples) if samples else None,
        accuracy=right / len(kept) if kept else None,
        bound=clopper_pearson_lower(right, len(kept), delta),
    )
