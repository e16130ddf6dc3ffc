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

The samples, rules and bounds this works with are judgements/core/kept_verdicts.py's.
"""

import dataclasses
import hashlib
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from typing_extensions import TypedDict

from judgements.core.kept_verdicts import (
    Evaluated,
    EvaluatedFields,
    Sample,
    check_delta,
    clopper_pearson_lower,
    evaluate,
)

# Re-exported (the `as`, core/ being checked with no implicit re-export): a certificate's
# rule is named certificate.Rule where it is stored and shown.
from judgements.core.kept_verdicts import Rule as Rule

METHOD = "split-fixed-sequence"
# A third of the cases choose the rule, two thirds test it: on synthetic suites
# (bench/certificate_validity.py, docs/contested.md) it kept more coverage than a half,
# and as much as a quarter, from 128 to 512 cases.
DEFAULT_SELECTION = 1 / 3
DEFAULT_SEED = 0


# --- the split -----------------------------------------------------------------------


class SplitFields(TypedDict):
    """A split as a certificate stores it (Split.as_dict): what recomputes it, and the
    samples' keys on each side."""

    seed: int
    selection_share: float
    selection: list[str]
    test: list[str]


@dataclass(frozen=True)
class Split:
    """Which samples chose the rule and which tested it, by key, with what recomputes it:
    cases ordered by sha256("<seed>:<case>"), the first `selection_share` of them (rounded)
    to the selection part."""

    seed: int
    selection_share: float
    selection: list[Sample]
    test: list[Sample]  # one sample per case: its first repeat by key

    def as_dict(self) -> SplitFields:
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
        named.append(dataclasses.replace(sample, key=key, case=sample.case or key))
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
    starting threshold with the highest bound. Ties: fewer absent signals, then the
    sources in the order given, then no source. None without a sample any rule keeps."""
    best: tuple[tuple[float, ...], Family] | None = None
    for size_rank, absent in enumerate(_subsets(signals)):
        free = [s for s in selection if s.signals.isdisjoint(absent)]
        everything: list[_Step] = [(None, len(free), sum(s.right for s in free), _injections(free))]
        # No source ranks last: where the selection cannot tell them apart, a threshold
        # keeps what it kept there and still leaves out the unsure verdicts it never saw.
        ladders: list[tuple[int, str | None, list[_Step]]] = [
            (len(sources), None, everything if free else [])
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


class StepFields(EvaluatedFields):
    """One step of the fixed sequence, as a certificate stores it: the rule's counts on
    the test part, and whether it passed."""

    passed: bool


class CurvePoint(TypedDict):
    """The chosen family at one threshold, on the test part (the report's chart)."""

    threshold: float | None
    coverage: float | None
    accuracy: float | None
    bound: float


class OutcomeFields(TypedDict):
    """What `certify` found, as JSON (Outcome.as_dict)."""

    target: float
    delta: float
    method: str
    guarantee: float | None
    split: SplitFields
    certified: EvaluatedFields | None
    best: EvaluatedFields | None
    tested: list[StepFields]
    curve: list[CurvePoint]


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
    tested: list[StepFields] = field(default_factory=list)
    curve: list[CurvePoint] = field(default_factory=list)

    @property
    def guarantee(self) -> float | None:
        """What the certificate promises: the target, when a rule passed."""
        return self.target if self.certified is not None else None

    def as_dict(self) -> OutcomeFields:
        return {
            "target": self.target,
            "delta": self.delta,
            "method": self.method,
            "guarantee": self.guarantee,
            "split": self.split.as_dict(),
            "certified": self.certified.as_dict() if self.certified else None,
            "best": self.best.as_dict() if self.best else None,
            "tested": [step.copy() for step in self.tested],
            "curve": [point.copy() for point in self.curve],
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
    check_delta(delta)
    parts = split(samples, selection_share, seed)
    family = choose(parts.selection, target=target, delta=delta, sources=sources, signals=signals)
    tested = [] if family is None else fixed_sequence(family, parts.test, target, delta)
    passed = [step for step, ok in tested if ok]
    curve: list[CurvePoint] = []
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
