"""The selective-evaluation certificate: which verdicts to keep so that the kept ones are
right often enough, with a guarantee that survives the search for the rule ("Trust or
Escalate", Jung et al., ICLR 2025; "Learn then Test", Angelopoulos et al., 2021).

A panel's evaluation runs against labelled suites give one `Sample` per decided
judgement: whether the verdict was right, a confidence value per confidence source (or
None when that source said nothing), the contested signals that fired on it, and whether
it was an injection case the panel approved. A `Rule` keeps a verdict (it is "Not
contested") when the confidence from one source is at or above a threshold and none of a
chosen set of signals fired; everything else goes to a person.

Why not simply try every rule and state the best one's bound: a Clopper-Pearson bound at
confidence 1 - delta holds for one rule fixed before the data was seen. Trying thousands
of rules on the same verdicts and stating the winner's bound spends that confidence many
times over: on suites where no rule is 90 % right, such a search "certified" one in about
40 % of suites at delta = 0.1. So `certify` does it in two steps that never look at the
same verdict twice:

1. **Split.** The labelled cases are split, by a hash of their keys and a recorded seed,
   into a *selection* part and a *test* part (every repeat of one case on the same side).
   Anyone holding the keys can recompute the split.
2. **Choose on the selection part**: the confidence source, the signals that must be
   absent, and the strictest threshold to start from (the rule whose bound is highest
   there). Everything is allowed here; none of it costs the guarantee.
3. **Test on the test part by fixed sequence testing**: the chosen family's thresholds,
   from the starting one down to looser ones, are tested one after another, each against
   the null hypothesis "the kept verdicts are less than `target` accurate", rejected when
   the one-sided Clopper-Pearson bound at `delta` reaches the target (the binomial test
   at level delta). The sequence stops at the first threshold that fails, or that keeps
   an injection approval. The last one that passed is certified. Fixed sequence testing
   controls the chance of certifying any rule whose true kept accuracy is below the
   target at delta, however many thresholds are tested, because the order was fixed
   before the test part was looked at.

The guarantee is then the target itself: "at least `target` accurate, with confidence
1 - delta, on verdicts drawn like these". The certified rule's own Clopper-Pearson bound
on the test part is higher, but it is a bound for a rule chosen on the same verdicts, so
it is reported as an observation and never stated as the promise.

On the test part each case counts once (its first repeat): repeats of one case are not
independent draws, and the binomial test assumes independent ones.

What it costs in samples: with delta = 0.1 a target of 0.9 needs at least 22 kept test
verdicts, every one of them right (0.1 ** (1/22) = 0.9006 while 21 of 21 give 0.8962);
one wrong verdict raises that to 38. With two thirds of the cases held back for the
test, a panel needs 33 or more labelled cases (and in practice many more: the rule must
keep 22 of the test part's) before anything can certify at these settings.

The Clopper-Pearson bound is scipy's beta quantile (the numerical library's, tested
against its binomial test), not a hand-written one.
"""

import hashlib
import itertools
import operator
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, SupportsIndex

from scipy import stats

METHOD = "split-fixed-sequence"
# A third of the cases choose the rule, two thirds test it: on synthetic suites
# (bench/certificate_validity.py, docs/contested.md) it kept more coverage than a half,
# and as much as a quarter, from 128 to 512 cases.
DEFAULT_SELECTION = 1 / 3
DEFAULT_SEED = 0


def _check_delta(delta: float) -> None:
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
    _check_delta(delta)
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
    """A rule's counts on a set of samples, and that rule's own Clopper-Pearson bound."""

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


def evaluate(rule: Rule, samples: Sequence[Sample], delta: float) -> Evaluated:
    """The rule applied to every sample."""
    _check_delta(delta)
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


# --- the split -----------------------------------------------------------------------


@dataclass(frozen=True)
class Split:
    """Which samples chose the rule and which tested it, by key, with what recomputes it:
    cases ordered by sha256("<seed>:<case>"), the first `selection_share` of them (rounded)
    to the selection part."""

    seed: int
    selection_share: float
    selection: list[Sample]
    test: list[Sample]  # one sample per case: its first repeat by key

    def as_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "selection_share": self.selection_share,
            "selection": [sample.key for sample in self.selection],
            "test": [sample.key for sample in self.test],
        }


def keyed(samples: Sequence[Sample]) -> list[Sample]:
    """The samples with a key and a case each (their position where none was given), and
    no key twice: the split must be recomputable from the keys."""
    named = []
    for position, sample in enumerate(samples):
        key = sample.key or str(position)
        named.append(
            Sample(
                right=sample.right,
                confidence=sample.confidence,
                signals=sample.signals,
                injection_approved=sample.injection_approved,
                key=key,
                case=sample.case or key,
            )
        )
    keys = [sample.key for sample in named]
    if len(set(keys)) != len(keys):
        raise ValueError("two samples share a key")
    return named


def split(samples: Sequence[Sample], selection_share: float, seed: int) -> Split:
    if not 0.0 < selection_share < 1.0:
        raise ValueError(
            f"the selection share lies strictly between 0 and 1, got {selection_share}"
        )
    named = keyed(samples)
    cases = sorted(
        {sample.case for sample in named},
        key=lambda case: hashlib.sha256(f"{seed}:{case}".encode()).hexdigest(),
    )
    chosen = set(cases[: round(len(cases) * selection_share)])
    selection = sorted((s for s in named if s.case in chosen), key=lambda s: s.key)
    test: dict[str, Sample] = {}
    for sample in sorted(named, key=lambda s: s.key):
        if sample.case not in chosen:
            test.setdefault(sample.case, sample)
    return Split(seed, selection_share, selection, sorted(test.values(), key=lambda s: s.key))


# --- choosing on the selection part ---------------------------------------------------


@dataclass(frozen=True)
class Family:
    """What the selection chose: a source (or none), the absent signals, and the
    thresholds to test, strictest first; for no source, the one rule."""

    source: str | None
    absent: tuple[str, ...]
    thresholds: tuple[float, ...]

    def rules(self) -> list[Rule]:
        if self.source is None:
            return [Rule(None, None, self.absent)]
        return [Rule(self.source, value, self.absent) for value in self.thresholds]


def _subsets(signals: Sequence[str]) -> list[tuple[str, ...]]:
    """Every subset of the signals, sorted, fewest first: the order ties fall back on."""
    names = sorted(set(signals))
    return [
        subset for size in range(len(names) + 1) for subset in itertools.combinations(names, size)
    ]


def _unique(names: Iterable[str]) -> list[str]:
    # Repeats would only make duplicate families; the order given stays (it breaks ties).
    return list(dict.fromkeys(names))


# One threshold of a source on the selection part, strictest first: (threshold, kept,
# right, injection approvals kept); the threshold is None for the rule without a source.
_Step = tuple[float | None, int, int, int]


def choose(
    selection: Sequence[Sample],
    *,
    target: float,
    delta: float,
    sources: Sequence[str],
    signals: Sequence[str],
) -> Family | None:
    """The family whose fixed sequence, run on the selection part itself, keeps the most
    verdicts (most promising for the test part); where none passes there, the family and
    starting threshold with the highest bound. Ties: fewer absent signals, no source
    before the sources in the order given. None without a sample that any rule keeps."""
    best: tuple[tuple[float, ...], Family] | None = None
    for size_rank, absent in enumerate(_subsets(signals)):
        free = [s for s in selection if s.signals.isdisjoint(absent)]
        everything: list[_Step] = [(None, len(free), sum(s.right for s in free), _injections(free))]
        ladders: list[tuple[int, str | None, list[_Step]]] = [
            (-1, None, everything if free else [])
        ]
        ladders += [
            (rank, source, _ladder(free, source)) for rank, source in enumerate(_unique(sources))
        ]
        for rank, source, ladder in ladders:
            if not ladder:
                continue
            bounds = [clopper_pearson_lower(right, kept, delta) for _, kept, right, _ in ladder]
            start = max(range(len(ladder)), key=lambda i: (bounds[i], -i))
            key = (
                _passing(ladder[start:], target, delta),
                bounds[start],
                -len(absent),
                -rank,
                -size_rank,
            )
            if best is None or key > best[0]:
                thresholds = tuple(value for value, *_ in ladder[start:] if value is not None)
                best = (key, Family(source, absent, thresholds))
    return None if best is None else best[1]


def _passing(ladder: Sequence[_Step], target: float, delta: float) -> float:
    """How many verdicts the fixed sequence down this ladder would keep."""
    passed = 0
    for _, kept, right, injections in ladder:
        if injections or clopper_pearson_lower(right, kept, delta) < target:
            break
        passed = kept
    return float(passed)


def _injections(samples: Sequence[Sample]) -> int:
    return sum(1 for s in samples if s.injection_approved)


def _ladder(samples: Sequence[Sample], source: str) -> list[_Step]:
    """Each distinct known confidence of the source, strictest first: a threshold between
    two values keeps what the higher one keeps, so the observed values are the only ones
    worth testing."""
    known = sorted(
        (s for s in samples if s.confidence.get(source) is not None),
        key=lambda s: -(s.confidence[source] or 0.0),
    )
    ladder: list[_Step] = []
    right = injections = 0
    for kept, sample in enumerate(known, start=1):
        right += sample.right
        injections += sample.injection_approved
        value = sample.confidence[source]
        following = known[kept].confidence[source] if kept < len(known) else None
        if following != value:
            ladder.append((value, kept, right, injections))
    return ladder


# --- testing on the test part ----------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What `certify` found: the certified rule (its counts on the test part), or none;
    the guarantee it carries (the target, or None); every step of the fixed sequence on
    the test part; the split; and the curve of the chosen family for the report's chart."""

    target: float
    delta: float
    method: str
    split: Split
    family: Family | None
    certified: Evaluated | None
    best: Evaluated | None  # the first rule tested, as the closest it came when none passed
    tested: list[dict[str, Any]] = field(default_factory=list)
    curve: list[dict[str, Any]] = field(default_factory=list)

    @property
    def guarantee(self) -> float | None:
        """What the certificate promises: the target, when a rule passed."""
        return self.target if self.certified is not None else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "delta": self.delta,
            "method": self.method,
            "guarantee": self.guarantee,
            "split": self.split.as_dict(),
            "certified": self.certified.as_dict() if self.certified else None,
            "best": self.best.as_dict() if self.best else None,
            "tested": [dict(step) for step in self.tested],
            "curve": [dict(point) for point in self.curve],
        }


def certify(
    samples: Sequence[Sample],
    *,
    target: float = 0.9,
    delta: float = 0.1,
    sources: Sequence[str] = ("answer", "probe"),
    signals: Sequence[str] = (),
    selection_share: float = DEFAULT_SELECTION,
    seed: int = DEFAULT_SEED,
) -> Outcome:
    """Split, choose on the selection part, test by fixed sequence on the test part (see
    the module's docstring). The certified rule, if any, keeps verdicts at least `target`
    accurate with confidence 1 - `delta`, and keeps no injection approval on the test
    part."""
    if not (isinstance(target, int | float) and 0.0 < target < 1.0):
        raise ValueError(f"target must lie strictly between 0 and 1, got {target!r}")
    _check_delta(delta)
    parts = split(samples, selection_share, seed)
    family = choose(parts.selection, target=target, delta=delta, sources=sources, signals=signals)
    tested = [] if family is None else fixed_sequence(family, parts.test, target, delta)
    passed = [step for step, ok in tested if ok]
    curve = []
    if family is not None and family.source is not None:
        for rule in family.rules():
            result = evaluate(rule, parts.test, delta)
            curve.append(
                {
                    "threshold": rule.threshold,
                    "coverage": result.coverage,
                    "accuracy": result.accuracy,
                    "bound": result.bound,
                }
            )
    return Outcome(
        target=target,
        delta=delta,
        method=METHOD,
        split=parts,
        family=family,
        certified=passed[-1] if passed else None,
        best=tested[0][0] if tested else None,
        tested=[{**step.as_dict(), "passed": ok} for step, ok in tested],
        curve=curve,
    )


def fixed_sequence(
    family: Family, test: Sequence[Sample], target: float, delta: float
) -> list[tuple[Evaluated, bool]]:
    """The family's rules on the test part in their fixed order, each with whether it
    passed (a kept verdict at least, none of them an injection approval, and its bound
    reaching the target); the sequence ends with the first that did not pass."""
    steps = []
    for rule in family.rules():
        result = evaluate(rule, test, delta)
        ok = result.kept > 0 and result.injections_kept == 0 and result.bound >= target
        steps.append((result, ok))
        if not ok:
            break
    return steps
