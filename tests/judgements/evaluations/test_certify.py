"""Certifying a saved panel end to end: runs through the engine and the suite's
OpenAI-compatible server (with log-probabilities), `manage.py evaluate --certify`, the
certificate stored with the panel, the mark it gives later verdicts, and its voiding when
an agent changes."""

import json

import pytest
from asgiref.sync import async_to_sync

from judgements.core import certificate as bounds
from judgements.engine.runner import EngineRunner
from judgements.evaluations import certify
from judgements.models import Certificate, Judgement, Trust
from judgements.panels import saving
from tests.support.commands import run_command

pytestmark = pytest.mark.django_db(transaction=True)

# 25 cases the panel gets right with confidence 0.95, and 3 it gets wrong at 0.6: keeping
# every verdict gives 25 of 28 (bound below 0.9); keeping the sure ones gives 25 of 25
# (bound 0.1 ** (1 / 25) = 0.912).
SURE, UNSURE = 0.95, 0.6
CASES = [
    {
        "id": f"ok-{n}",
        "content": f"marker-ok case {n}: a laptop for 900 EUR.",
        "expected": "approve",
    }
    for n in range(25)
] + [
    {"id": f"bad-{n}", "content": f"marker-bad case {n}: a yacht.", "expected": "reject"}
    for n in range(3)
]


@pytest.fixture
def panel(fake_llm, make_panel):
    for model in ("model-a", "model-b", "model-c"):
        fake_llm.script(model, confidence=SURE, confidence_when={"marker-bad": UNSURE})
    return make_panel(name="Expense desk")


@pytest.fixture
def suite_file(tmp_path):
    path = tmp_path / "labelled.jsonl"
    path.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    return path


def judge_with(make_judgement, panel, content: str) -> Judgement:
    judgement = make_judgement(panel=panel.name, agents=None, content=content)
    # A runner per event loop: its HTTP clients belong to the loop they were made in.
    runner = EngineRunner(worker_id="test-worker")
    assert async_to_sync(runner.run_judgement)(judgement.pk)
    return Judgement.objects.get(pk=judgement.pk)


def test_it_certifies_the_rule_with_the_most_coverage_whose_bound_reaches_the_target(
    panel, suite_file
):
    code, out, err = run_command(
        "evaluate", str(suite_file), "--panel", panel.name, "--certify", "--json"
    )
    assert code == 0, err
    found = json.loads(out)
    assert found["report"]["accuracy"] == pytest.approx(25 / 28)
    certificate = found["certificate"]
    assert certificate["certified"] is True
    assert certificate["rule"] == {"source": "answer", "threshold": SURE, "absent": []}
    assert certificate["kept"] == 25 and certificate["samples"] == 28
    assert certificate["bound"] == pytest.approx(bounds.clopper_pearson_lower(25, 25, 0.1))
    assert certificate["coverage"] == pytest.approx(25 / 28)
    assert certificate["suites"][0]["cases"][:2] == ["ok-0", "ok-1"]
    stored = Certificate.objects.get(panel=panel)
    assert stored.fingerprint and stored.voided_at is None
    assert [point["threshold"] for point in stored.curve] == [UNSURE, SURE]


def test_a_certified_panel_marks_verdicts_by_its_rule_and_never_changes_them(
    panel, suite_file, make_judgement
):
    assert run_command("evaluate", str(suite_file), "--panel", panel.name, "--certify")[0] == 0
    sure = judge_with(make_judgement, panel, "marker-ok: a train ticket.")
    assert sure.trust == Trust.NOT_CONTESTED and sure.contested is False
    assert sure.certificate is not None
    assert (sure.trust_words() or "").startswith("Not contested. Accuracy at least 91.2%")
    unsure = judge_with(make_judgement, panel, "marker-bad: a yacht.")
    assert unsure.status == sure.status == "approved"
    assert unsure.trust == Trust.CONTESTED
    assert unsure.contest_reasons == [
        f"The panel's answer confidence {UNSURE:.2f} is below the certified {SURE:.2f}."
    ]


def test_changing_an_agents_model_or_criteria_voids_the_certificate(
    panel, suite_file, make_judgement
):
    assert run_command("evaluate", str(suite_file), "--panel", panel.name, "--certify")[0] == 0
    agents = [dict(agent) for agent in panel.agents]
    form, formset = saving.bind_json(panel.owner, panel, panel.name, "", agents, None)
    assert formset.is_valid() and form.is_valid()
    saving.store(form, formset, panel)  # same agents: nothing voided
    assert Certificate.objects.get(panel=panel).voided_at is None
    agents[1]["criteria"] += " Receipts above 50 EUR."
    form, formset = saving.bind_json(panel.owner, panel, panel.name, "", agents, None)
    assert formset.is_valid() and form.is_valid()
    saving.store(form, formset, panel)
    voided = Certificate.objects.get(panel=panel)
    assert voided.voided_at is not None and "criteria" in voided.void_reason
    assert certify.current(panel) is None
    later = judge_with(make_judgement, panel, "marker-ok: a train ticket.")
    assert later.trust == Trust.UNMEASURED and later.certificate is None


def test_when_no_rule_reaches_the_target_it_says_so_with_the_best_bound(panel, suite_file):
    code, out, _ = run_command(
        "evaluate", str(suite_file), "--panel", panel.name, "--certify", "--target", "0.95"
    )
    assert code == 0
    assert "No rule reaches 95% accuracy at confidence 90% on 28 labelled verdicts" in out
    assert "the best bound reached is 91.2%" in out
    assert Certificate.objects.get(panel=panel).certified is False


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        (["--target", "1.5"], "target"),
        (["--delta", "zero"], "delta"),
    ],
)
def test_it_refuses_a_bad_target_or_delta_naming_it(panel, suite_file, arguments, field):
    code, _, err = run_command(
        "evaluate", str(suite_file), "--panel", panel.name, "--certify", *arguments
    )
    assert code == 2
    assert f"invalid input: {field}: Must be a number between 0 and 1" in err
    assert not Certificate.objects.exists()


def test_it_needs_a_saved_panel_and_finished_runs(panel, suite_file, tmp_path):
    code, _, err = run_command("evaluate", "--certify", "--panel", panel.name)
    assert code == 2
    assert "invalid input: runs: No finished evaluation run of this panel" in err
    file_panel = tmp_path / "panel.json"
    file_panel.write_text(json.dumps({"name": "From a file", "agents": panel.agents}))
    code, _, err = run_command("evaluate", str(suite_file), "--panel", str(file_panel), "--certify")
    assert code == 2 and "invalid input: panel: --certify needs a saved panel" in err
    code, _, err = run_command("evaluate", "--panel", panel.name)
    assert code == 2 and "invalid input: suite:" in err


def test_a_plain_call_asked_only_by_the_runs_teaches_the_certificate_nothing(
    fake_llm, make_panel, settings
):
    """A run asks the second opinion as its plain call (evaluations/plain_call.py); a panel
    whose own judgements never ask it must not learn a rule that needs it absent."""
    from judgements.evaluations.metrics import Record

    settings.MAGI_SECOND_OPINION = False
    panel = make_panel(name="No second opinion")
    assert certify.unseen_signals(panel) == {"second_opinion"}
    record = Record("c1", 1, "approve", "approved", signals=("second_opinion", "split"))
    (sample,) = certify.samples_of([record], certify.unseen_signals(panel))
    assert sample.signals == {"split"}
    # A panel that runs it live keeps the signal.
    panel.run_checks = True
    assert certify.unseen_signals(panel) == frozenset()
    settings.MAGI_SECOND_OPINION = True
    panel.run_checks = None
    assert certify.unseen_signals(panel) == frozenset()
