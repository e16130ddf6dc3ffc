"""A panel whose agents lean to reject, and labelled cases an offset can correct: what
the calibration tests learn from (tests/judgements/evaluations/test_calibrate.py, and
`manage.py calibrate` in tests/judgements/management/commands/test_calibrate.py)."""

from judgements.models import Certificate, Panel
from judgements.panels import variant_setting

# Every agent rejects every case, sure of it: P(approve) 0.2 where its criterion is met
# (marker-ok), 0.01 where it is not (marker-bad). A lean to reject an offset can undo.
LEANING_CASES = [
    {
        "id": f"ok-{n}",
        "content": f"marker-ok case {n}",
        "expected": "approve",
        "expected_agents": ["approve"] * 3,
    }
    for n in range(8)
] + [
    {
        "id": f"bad-{n}",
        "content": f"marker-bad case {n}",
        "expected": "reject",
        "expected_agents": ["reject"] * 3,
    }
    for n in range(8)
]


def script_leaning(fake_llm) -> None:
    """The three models scripted to reject with the confidences above."""
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(model, votes="RRR", confidence_when={"marker-ok": 0.8, "marker-bad": 0.99})


def leaning_panel(fake_llm, make_panel) -> Panel:
    """The saved panel "Leaning desk", run with decision_first+calibrated, its three
    models scripted to reject with the confidences above."""
    script_leaning(fake_llm)
    panel = make_panel(name="Leaning desk")
    panel.prompt_variants = ["decision_first", "calibrated"]
    panel.save(update_fields=["prompt_variants"])
    return panel


def certificate_of(panel: Panel) -> Certificate:
    """A certificate in force for the panel as it is now (what a recalibration voids)."""
    return Certificate.objects.create(
        panel=panel,
        agents=panel.agents,
        fingerprint=variant_setting.fingerprint_of(panel),
        target=0.9,
        delta=0.1,
        samples=16,
        certified=True,
    )
