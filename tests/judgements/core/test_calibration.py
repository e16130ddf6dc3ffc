import math

import pytest

from judgements.core import calibration

# An agent that leans to reject: P(approve) about 0.1 when its criterion is met, about
# 0.01 when it is not (issue 42's probe figures).
LEANING = [(0.1, "approve")] * 8 + [(0.12, "approve")] * 4 + [(0.01, "reject")] * 12


def test_it_learns_an_offset_that_undoes_a_lean_to_reject():
    offset = calibration.learn_offset(LEANING)
    assert offset is not None and offset > 0
    assert calibration.calibrated_vote(0.1, offset) == "approve"
    assert calibration.calibrated_vote(0.01, offset) == "reject"


def test_the_offset_is_the_maximum_likelihood_one():
    offset = calibration.learn_offset(LEANING)
    assert offset is not None

    def likelihood(shift: float) -> float:
        return sum(
            math.log(calibration.sigmoid(calibration.logit(p) + shift))
            if label == "approve"
            else math.log(1 - calibration.sigmoid(calibration.logit(p) + shift))
            for p, label in LEANING
        )

    assert likelihood(offset) >= likelihood(offset + 0.01)
    assert likelihood(offset) >= likelihood(offset - 0.01)


def test_an_unleaning_model_keeps_its_threshold():
    fair = [(0.9, "approve")] * 8 + [(0.1, "reject")] * 8
    assert calibration.learn_offset(fair) == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize(
    "samples",
    [
        [(0.1, "approve")] * 4 + [(0.01, "reject")] * 4,  # too few
        [(0.1, "approve")] * 20,  # one side only
        [(0.1, "approve")] * 17 + [(0.01, "reject")] * 3,  # too few of one side
    ],
)
def test_it_learns_nothing_from_too_little(samples):
    assert calibration.learn_offset(samples) is None


def test_an_unknown_probability_or_offset_keeps_the_models_decision():
    assert calibration.calibrated_vote(None, 3.0) is None
    assert calibration.calibrated_vote(0.1, None) is None


def test_a_calibrated_half_is_no_approval():
    assert calibration.calibrated_vote(0.5, 0.0) == "reject"


def test_a_panels_offsets_hold_for_its_agents_only():
    learned = calibration.learn("abc", [LEANING, LEANING[:3], []], runs=[7])
    assert learned.offsets[1] is None and learned.offsets[2] is None
    again = calibration.PanelCalibration.from_dict(learned.as_dict())
    assert again == learned
    assert again.offsets_for("abc") == learned.offsets
    assert again.offsets_for("other agents") is None


def test_offsets_learned_under_recorded_variants_hold_under_those_only():
    learned = calibration.learn("abc", [LEANING] * 3, runs=[7], variants=["decision_first"])
    again = calibration.PanelCalibration.from_dict(learned.as_dict())
    assert again == learned and again.variants == ("decision_first",)
    # `calibrated` only reads the offsets: learned without it, they hold with it.
    assert again.offsets_for("abc", ["calibrated", "decision_first"]) == learned.offsets
    assert again.offsets_for("abc", ["decision_first"]) == learned.offsets
    assert again.offsets_for("abc", ["calibrated"]) is None
    assert again.offsets_for("abc", ["decision_first", "quote", "calibrated"]) is None
    # Not recorded (as the quality bench stores them): for any variants, as before.
    unrecorded = calibration.learn("abc", [LEANING] * 3)
    assert "variants" not in unrecorded.as_dict()
    assert unrecorded.offsets_for("abc", ["quote", "calibrated"]) == unrecorded.offsets
