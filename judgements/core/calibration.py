"""Calibrated decisions from a model's own probabilities: the CALIBRATED variant of issue 42
(judgements/core/prompt_variants.py). Pure, no Django.

"Calibrate Before Use" (Zhao et al. 2021) found that a small model's answers lean to one
label whatever the input, and that moving the model's probabilities by a fixed correction
undoes the lean. Issue 42 measured such a lean on MAGI's agents (P(approve) about 0.06 to
0.14 on requests that meet the criterion). Here the correction is learned, per agent of a
panel, from labelled suites, the way certificates are (judgements/evaluations/
calibrate.py): a shift `offset` of the log-odds of approve,

    calibrated P(approve) = sigmoid(logit(p) + offset),

fitted to the agents' round-1 P(approve) against the cases' expected_agents by maximum
likelihood (one parameter: a logistic regression whose slope is fixed at 1, so the
model's ordering of cases is kept and only its threshold moves). An agent's vote is then
approve when its calibrated P(approve) is above one half, which is logit(p) > -offset.

Nothing is learned from too few labels or from one label alone (None: the agent keeps
its own decision), and an unknown probability is never an approval: the model's own
decision stands. The offset only moves each agent's vote; the weighted 2-of-3 rule that
turns votes into a verdict is unchanged.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from judgements.core.prompt_variants import Variant

APPROVE, REJECT = "approve", "reject"
# Labels an offset needs, in all and of each side: fewer say nothing about a lean.
MIN_SAMPLES = 12
MIN_EACH = 4
# Probabilities are clipped so a provider's exact 0 or 1 stays finite in log-odds.
EPSILON = 1e-6
# The correction is bounded: beyond it the model's probability no longer says anything.
MAX_OFFSET = 10.0
# Halvings of the offset's range [-10, 10]: 60 reach far below a float's precision.
BISECTIONS = 60


def logit(p: float) -> float:
    p = min(max(p, EPSILON), 1 - EPSILON)
    return math.log(p / (1 - p))


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x)) if x >= 0 else math.exp(x) / (1 + math.exp(x))


def learn_offset(samples: Sequence[tuple[float, str]]) -> float | None:
    """The log-odds shift that best fits (P(approve), expected vote) pairs, or None when
    there are too few or only one side. The log-likelihood is concave in the offset, so
    its slope (approvals expected less approvals fitted) falls as the offset grows: the
    best offset is where the slope crosses zero, found by bisection (Newton's method
    overshoots on a model as lopsided as the one measured)."""
    known = [(logit(p), expected == APPROVE) for p, expected in samples]
    approves = sum(label for _, label in known)
    if len(known) < MIN_SAMPLES or min(approves, len(known) - approves) < MIN_EACH:
        return None

    def slope(offset: float) -> float:
        return approves - sum(sigmoid(x + offset) for x, _ in known)

    low, high = -MAX_OFFSET, MAX_OFFSET
    if slope(high) > 0:
        return high
    if slope(low) < 0:
        return low
    for _ in range(BISECTIONS):
        middle = (low + high) / 2
        low, high = (middle, high) if slope(middle) > 0 else (low, middle)
    return (low + high) / 2


def calibrated_vote(p_approve: float | None, offset: float | None) -> str | None:
    """approve or reject from the calibrated probability; None (keep the model's own
    decision) when the probability or the offset is unknown. A calibrated one half
    exactly is no approval."""
    if p_approve is None or offset is None:
        return None
    return APPROVE if logit(p_approve) + offset > 0 else REJECT


class StoredCalibration(TypedDict):
    """A panel's calibration as its `calibration` JSON holds it (PanelCalibration.as_dict).
    `runs` is absent from the first ones stored; `variants` when they were not recorded."""

    fingerprint: str
    offsets: list[float | None]
    samples: list[int]
    runs: NotRequired[list[int]]
    variants: NotRequired[list[str]]


@dataclass(frozen=True)
class PanelCalibration:
    """A panel's learned offsets, one per agent in panel order (None: not learned), for
    the agents of `fingerprint` only (models/certificates.py agents_fingerprint): a panel
    whose models or criteria changed has none. `variants`: the prompt variants the
    answers were asked with (`calibrated` aside), when recorded (a saved panel's,
    judgements/evaluations/calibrate.py): it then holds for those only; None (not
    recorded, as the quality bench stores it) holds for any."""

    fingerprint: str
    offsets: tuple[float | None, ...]
    samples: tuple[int, ...]
    runs: tuple[int, ...] = ()
    variants: tuple[str, ...] | None = None

    def as_dict(self) -> StoredCalibration:
        stored: StoredCalibration = {
            "fingerprint": self.fingerprint,
            "offsets": list(self.offsets),
            "samples": list(self.samples),
            "runs": list(self.runs),
        }
        return stored if self.variants is None else stored | {"variants": list(self.variants)}

    @classmethod
    def from_dict(cls, stored: StoredCalibration) -> "PanelCalibration":
        variants = stored.get("variants")
        return cls(
            fingerprint=str(stored["fingerprint"]),
            offsets=tuple(stored["offsets"]),
            samples=tuple(stored["samples"]),
            runs=tuple(stored.get("runs", ())),
            variants=None if variants is None else tuple(variants),
        )

    def offsets_for(
        self, fingerprint: str, variants: Iterable[str] | None = None
    ) -> tuple[float | None, ...] | None:
        """The offsets when they were learned for these agents and, if the variants they
        were learned under are recorded, under `variants` (`calibrated` aside); else None."""
        if fingerprint != self.fingerprint:
            return None
        if self.variants is None or variants is None:
            return self.offsets
        asked = {str(variant) for variant in variants} - {Variant.CALIBRATED.value}
        return self.offsets if set(self.variants) == asked else None


def learn(
    fingerprint: str,
    per_agent: Sequence[Sequence[tuple[float, str]]],
    runs: Sequence[int] = (),
    variants: Iterable[str] | None = None,
) -> PanelCalibration:
    """Each agent's offset from its own (P(approve), expected vote) pairs; `variants`, the
    prompt variants they were asked with, recorded when given."""
    return PanelCalibration(
        fingerprint=fingerprint,
        offsets=tuple(learn_offset(samples) for samples in per_agent),
        samples=tuple(len(samples) for samples in per_agent),
        runs=tuple(runs),
        variants=None if variants is None else tuple(sorted(str(v) for v in variants)),
    )
