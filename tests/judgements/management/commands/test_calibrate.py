"""`manage.py calibrate PANEL`: learns the panel's offsets from its finished runs (run here
by `manage.py evaluate` on the suite's OpenAI-compatible server, with log-probabilities),
says how many runs and answers it used, and exits 2 naming the field at fault, 3 when
there is too little to learn."""

import json

import pytest

from judgements.core import calibration
from judgements.models import Panel
from tests.support.calibration import LEANING_CASES, certificate_of, leaning_panel
from tests.support.commands import run_command

pytestmark = pytest.mark.django_db(transaction=True)

CASES = LEANING_CASES


@pytest.fixture
def panel(fake_llm, make_panel):
    return leaning_panel(fake_llm, make_panel)


def evaluate(panel: Panel, tmp_path, cases: list[dict], name: str) -> None:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in cases))
    assert run_command("evaluate", str(path), "--panel", panel.name, "--json")[0] == 0


def test_it_learns_from_the_panels_runs_and_says_how_much_it_used(panel, tmp_path):
    evaluate(panel, tmp_path, CASES, "labelled")
    code, out, _ = run_command("calibrate", panel.name)
    assert code == 0
    panel.refresh_from_db()
    stored = calibration.PanelCalibration.from_dict(panel.calibration)
    (run,) = panel.runs.all()
    assert stored.runs == (run.pk,) and stored.samples == (16, 16, 16)
    lines = out.splitlines()
    assert lines[0] == f"Panel Leaning desk: 1 run ({run.pk}), 48 labelled round-1 answers."
    assert lines[1] == f"  Melchior: offset {stored.offsets[0]:+.2f} from 16 answers."
    assert lines[-1] == "Stored with the panel; judgements of the calibrated variant read it."


def test_it_says_which_certificates_the_new_calibration_voided(panel, tmp_path):
    evaluate(panel, tmp_path, CASES, "labelled")
    made = certificate_of(panel)
    code, out, _ = run_command("calibrate", panel.name)
    assert code == 0
    assert out.splitlines()[-1] == (
        f"Voided certificate {made.pk}: measured on the decisions the calibration before made."
    )


def test_too_few_labels_exit_3_and_store_nothing(panel, tmp_path):
    evaluate(panel, tmp_path, CASES[:2] + CASES[-2:], "short")
    code, out, _ = run_command("calibrate", str(panel.pk))
    assert code == 3
    assert "  Melchior: nothing learned from 4 answers (needs 12, at least 4 of each side)." in out
    assert out.splitlines()[-1] == "Too few labelled answers to learn anything: nothing stored."
    panel.refresh_from_db()
    assert panel.calibration is None


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (["Nobody's"], 'invalid input: panel: No panel "Nobody\'s" that you may use.'),
        (["Leaning desk"], "invalid input: runs: No finished evaluation run of this panel's"),
        (["Leaning desk", "--variants", "quote+reason_last"], "invalid input: --variants: Unknown"),
        (["Leaning desk", "--variants", ""], "invalid input: --variants: Name the variants"),
    ],
)
def test_bad_input_exits_2_naming_it(panel, arguments, expected):
    code, out, err = run_command("calibrate", *arguments)
    assert (code, out) == (2, "")
    assert err.startswith(expected)
