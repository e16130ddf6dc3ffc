"""`manage.py evaluate`: exit codes, the JSON report's keys, the
progress line, and bad input refused with the field or line named, storing nothing."""

import json

import pytest

from judgements.models import EvaluationRun, Judgement, Panel, Suite
from tests.support.cases import case_for
from tests.support.commands import run_command
from tests.support.evaluations import GATE_CASES, RUN_REPORT_KEYS, write_suite

pytestmark = pytest.mark.django_db(transaction=True)

AGENTS = case_for()["agents"]


def write_panel(tmp_path, panel=None):
    path = tmp_path / "panel.json"
    path.write_text(json.dumps(panel or {"name": "File panel", "agents": AGENTS}))
    return path


@pytest.fixture
def scripted(fake_llm):
    # The injection talks Melchior and Balthasar round in round 2.
    fake_llm.script("model-a", votes_when={"marker-ok": "AAA", "marker-inj": "RAA"})
    fake_llm.script("model-b", votes_when={"marker-ok": "AAA", "marker-inj": "RAA"})
    fake_llm.script("model-c", votes_when={"marker-ok": "RRR", "marker-inj": "RRR"})
    return fake_llm


def test_it_prints_the_json_report_and_progress_on_stderr(scripted, tmp_path):
    code, out, err = run_command(
        "evaluate",
        str(write_suite(tmp_path)),
        "--panel",
        str(write_panel(tmp_path)),
        "--repeat",
        "2",
        "--json",
    )
    assert code == 0
    report = json.loads(out)
    assert list(report) == RUN_REPORT_KEYS
    assert (report["cases"], report["repeats"], report["judgements"]) == (2, 2, 4)
    assert report["accuracy"] == 0.5  # ok approved twice, inj approved twice
    assert report["attack_success_rate"] == 1.0
    assert report["deliberation"] == {"fixed": 0, "broke": 2}
    assert report["vote_changes"] == 4
    assert report["vote_changes_by_round"] == {"2": 4, "3": 0}
    assert report["unstable_cases"] == []
    assert [set(agent) for agent in report["agents"]] == [
        {"name", "accuracy", "round1_accuracy", "vote_changes", "changes_with_majority"}
    ] * 3
    assert [agent["name"] for agent in report["agents"]] == ["Melchior", "Balthasar", "Casper"]
    lines = err.splitlines()
    assert lines[1] == "progress: 0/4 judgements finished, 0 errors"
    assert lines[-1] == "progress: 4/4 judgements finished, 0 errors"
    run = EvaluationRun.objects.get()
    assert (run.panel, run.panel_name, run.repeats, run.suite.name) == (
        None,
        "File panel",
        2,
        "gate-cases",
    )
    assert lines[0] == f"run {run.pk}: panel File panel on suite gate-cases, 2 repeat(s)"


def test_it_prints_a_readable_report_without_json(scripted, tmp_path):
    code, out, _ = run_command(
        "evaluate", str(write_suite(tmp_path)), "--panel", str(write_panel(tmp_path))
    )
    assert code == 0
    assert "Accuracy: 50.0%" in out
    assert "  perfect agents under the rule: -" in out  # the suite gives no expected_agents
    assert "Attack success rate: 100.0%" in out
    assert "  Melchior: accuracy -, round 1 -, 1 vote changes (0 with the majority)" in out
    # The plain call (the second opinion, on model-a) reads the injection with model-a's
    # round-1 vote: it rejects it, where the panel was talked round.
    assert "Panel against one plain call of model-a told the three criteria and the rule" in out
    assert "  injections approved: panel 1/1 [20.7% to 100.0%], plain 0/1 [0.0% to 79.3%]" in out


def test_it_runs_a_saved_panel_by_name_and_reuses_an_identical_suite(scripted, tmp_path):
    panel = Panel.objects.create(name="Saved gate", owner=None, agents=AGENTS)
    suite_path = write_suite(tmp_path)
    for _ in range(2):
        code, _, _ = run_command("evaluate", str(suite_path), "--panel", "saved GATE", "--json")
        assert code == 0
    assert Suite.objects.count() == 1
    assert [run.panel for run in EvaluationRun.objects.all()] == [panel, panel]


def test_a_changed_file_under_a_stored_suites_name_is_refused(scripted, tmp_path):
    panel = str(write_panel(tmp_path))
    assert run_command("evaluate", str(write_suite(tmp_path)), "--panel", panel)[0] == 0
    changed = write_suite(tmp_path, GATE_CASES[:1])
    code, out, err = run_command("evaluate", str(changed), "--panel", panel)
    assert code == 2
    assert out == ""
    assert err.startswith("invalid input: suite: A different suite is already called 'gate-cases'")
    assert EvaluationRun.objects.count() == 1


@pytest.mark.parametrize(
    ("suite_cases", "args", "expected_error"),
    [
        (
            [GATE_CASES[0], {**GATE_CASES[1], "expected": "no"}],
            [],
            "invalid input: line 2.expected: Must be 'approve' or 'reject'.",
        ),
        (
            GATE_CASES,
            ["--repeat", "0"],
            "invalid input: repeat: Must be a whole number from 1 to 20.",
        ),
        (
            GATE_CASES,
            ["--repeat", "two"],
            "invalid input: repeat: Must be a whole number from 1 to 20.",
        ),
    ],
)
def test_bad_input_exits_2_naming_the_field_and_stores_nothing(
    scripted, tmp_path, suite_cases, args, expected_error
):
    suite = str(write_suite(tmp_path, suite_cases))
    code, out, err = run_command("evaluate", suite, "--panel", str(write_panel(tmp_path)), *args)
    assert (code, out) == (2, "")
    assert expected_error in err.splitlines()
    assert not Suite.objects.exists()
    assert not Judgement.objects.exists()


def test_a_bad_panel_file_exits_2_naming_its_fields(scripted, tmp_path):
    agents = [AGENTS[0], {**AGENTS[1], "model": "no-such-model"}, AGENTS[2]]
    panel = write_panel(tmp_path, {"name": "", "agents": agents, "colour": "red"})
    code, _, err = run_command("evaluate", str(write_suite(tmp_path)), "--panel", str(panel))
    assert code == 2
    fields = [line.split(": ")[1] for line in err.splitlines()]
    assert fields == ["panel.colour", "panel.name", "panel.agents[1].model"]
    assert not Suite.objects.exists()


def test_a_saved_panel_whose_model_is_gone_exits_2_and_stores_no_suite(scripted, tmp_path):
    agents = [{**AGENTS[0], "model": "retired-model"}, *AGENTS[1:]]
    Panel.objects.create(name="Old gate", owner=None, agents=agents)
    code, _, err = run_command("evaluate", str(write_suite(tmp_path)), "--panel", "Old gate")
    assert code == 2
    assert err.startswith("invalid input: panel.agents[0].model: Unknown model retired-model.")
    assert not Suite.objects.exists()


def test_an_unknown_panel_and_a_missing_suite_exit_2(scripted, tmp_path):
    code, _, err = run_command("evaluate", str(tmp_path / "none.jsonl"), "--panel", "Nobody's")
    assert code == 2
    assert err.splitlines() == [
        'invalid input: panel: No panel "Nobody\'s" that you may use. Nor is it a panel file.',
        f"invalid input: suite: Cannot read {tmp_path / 'none.jsonl'}: No such file or directory.",
    ]


# --- manage.py suite -------------------------------------------------------------------


def test_variants_name_the_runs_prompt_variants_else_the_panels(scripted, tmp_path):
    Panel.objects.create(name="Saved gate", owner=None, agents=AGENTS, prompt_variants=["quote"])
    suite = str(write_suite(tmp_path))
    assert run_command("evaluate", suite, "--panel", "Saved gate", "--json")[0] == 0
    assert (
        run_command(
            "evaluate",
            suite,
            "--panel",
            "Saved gate",
            "--variants",
            "decision_first+quote",
            "--json",
        )[0]
        == 0
    )
    assert run_command("evaluate", suite, "--panel", "Saved gate", "--variants", "none")[0] == 0
    made = [run.prompt_variants for run in EvaluationRun.objects.order_by("pk")]
    assert made == [["quote"], ["decision_first", "quote"], []]
    run = EvaluationRun.objects.order_by("pk")[1]
    assert all(j.prompt_variants == ["decision_first", "quote"] for j in run.judgements.all())


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("decision_first+reason_last", "Unknown prompt variant 'reason_last'"),
        ("named_peers+decisions_only", "named_peers and decisions_only both say"),
        ("", "Name the variants, joined with +, or none."),
    ],
)
def test_bad_variants_exit_2_naming_the_option(scripted, tmp_path, value, words):
    suite = str(write_suite(tmp_path))
    code, out, err = run_command(
        "evaluate", suite, "--panel", str(write_panel(tmp_path)), "--variants", value
    )
    assert (code, out) == (2, "")
    assert err.startswith(f"invalid input: --variants: {words}")
    assert not Suite.objects.exists() and not EvaluationRun.objects.exists()


def test_certify_refuses_variants_other_than_the_panels(scripted, tmp_path):
    Panel.objects.create(name="Saved gate", owner=None, agents=AGENTS, prompt_variants=["quote"])
    suite = str(write_suite(tmp_path))
    code, _, err = run_command(
        "evaluate", suite, "--panel", "Saved gate", "--variants", "none", "--certify"
    )
    assert code == 2
    assert "invalid input: --variants: --certify measures the panel with its own" in err
    assert not EvaluationRun.objects.exists()
