import contextlib
import io
import json

import pytest
from django.core import checks
from django.core.management import call_command, execute_from_command_line

from judgements.models import Judgement, RoundDecision, Status
from tests.support.cases import case_for
from tests.support.commands import run_judge

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_prints_the_result_as_json(fake_llm, tmp_path):
    fake_llm.script("model-a", votes="AAR")
    fake_llm.script("model-b", votes="RRR")
    fake_llm.script("model-c", votes="RAR")
    code, out, err = run_judge(tmp_path, case_for(), "--json")
    result = json.loads(out)
    assert code == 3  # rejected: not a go
    assert result["status"] == "rejected"
    assert result["error"] is None
    assert result["id"] == Judgement.objects.get().pk
    assert [(a["name"], a["final_decision"], a["score"]) for a in result["agents"]] == [
        ("Melchior", "approve", 0.5),
        ("Balthasar", "reject", 0.0),
        ("Casper", "reject", 0.4),
    ]
    assert result["agents"][0]["rounds"][2] == {
        "round": 3,
        "decision": "reject",
        "reason": "model-a says reject in round 3",
        "changed": True,
        "with_majority": None,  # in round 2 Balthasar rejected, Casper approved
        "p_approve": 0.1,  # the suite's server is 90 % sure of its reject
    }
    # One progress line per decision on stderr.
    assert len([line for line in err.splitlines() if line.startswith("round ")]) == 9
    assert "round 1: Melchior: approve - model-a says approve in round 1" in err


def test_it_prints_a_summary_without_json(fake_llm, tmp_path):
    code, out, _ = run_judge(tmp_path, case_for())
    assert code == 0
    assert out.splitlines()[0] == "Approved"
    assert "Melchior (model-a): approve, score 1.0" in out
    assert "  Trust not measured for this panel: no certificate holds" in out


def test_it_exits_1_with_the_named_cause_on_error(fake_llm, tmp_path):
    fake_llm.script("model-c", failures={3: ["500"] * 4})
    code, out, err = run_judge(tmp_path, case_for(), "--json")
    result = json.loads(out)
    assert code == 1
    assert result["status"] == "error"
    assert result["error"] == (
        "Agent 'Casper' failed in round 3: HTTP 500: scripted failure 500 (after 4 attempts)"
    )
    assert result["agents"][2]["final_decision"] is None
    assert RoundDecision.objects.count() >= 8
    assert "error: Agent 'Casper' failed in round 3" in err


@pytest.mark.parametrize(
    ("case", "field", "message"),
    [
        (
            case_for(agents=case_for()["agents"][:2]),
            "agents",
            "Exactly 3 agents are required, got 2",
        ),
        (
            case_for(agents=case_for()["agents"] * 2),
            "agents",
            "Exactly 3 agents are required, got 6",
        ),
        (case_for(content="   "), "content", "This field is required"),
        (case_for(title=""), "title", "This field is required"),
        (case_for(content="x" * 20_001), "content", "at most 20000 characters"),
        (
            case_for(agents=[*case_for()["agents"][:2], {**case_for()["agents"][0]}]),
            "agents[2].name",
            "Another agent is already called 'Melchior'",
        ),
        (
            case_for(
                agents=[{**case_for()["agents"][0], "model": "gpt-nope"}, *case_for()["agents"][1:]]
            ),
            "agents[0].model",
            "Unknown model gpt-nope",
        ),
        (
            case_for(
                agents=[{**case_for()["agents"][0], "criteria": ""}, *case_for()["agents"][1:]]
            ),
            "agents[0].criteria",
            "This field is required",
        ),
        (case_for(agents="three"), "agents", "Must be a list"),
        ("{not json", "case", "not valid JSON"),
        ([1, 2], "case", "Must be a JSON object"),
    ],
)
def test_it_exits_2_naming_the_invalid_field(fake_llm, tmp_path, case, field, message):
    code, out, err = run_judge(tmp_path, case)
    assert code == 2
    assert out == ""
    assert f"invalid input: {field}: " in err
    assert message in err
    assert Judgement.objects.count() == 0
    assert not fake_llm.requests


def test_names_are_unique_ignoring_case(fake_llm, tmp_path):
    agents = case_for()["agents"]
    agents[1]["name"] = "MELCHIOR"
    code, _, err = run_judge(tmp_path, case_for(agents=agents))
    assert code == 2
    assert "agents[1].name" in err


def test_it_exits_2_for_a_missing_file(fake_llm, tmp_path):
    err = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("judge", str(tmp_path / "nope.json"), stderr=err)
    assert exited.value.code == 2
    assert "invalid input: case: cannot read" in err.getvalue()


def test_it_stores_the_judgement_it_ran(fake_llm, tmp_path):
    run_judge(tmp_path, case_for())
    assert Judgement.objects.get().status == Status.APPROVED
    assert RoundDecision.objects.count() == 9


def test_it_judges_without_the_system_checks_of_pages_it_never_serves(fake_llm, tmp_path):
    """Django's system checks read the URLs, the admin and the templates: a third of a
    second of every gate's verdict (docs/benchmarks.md), and nothing a judgement uses."""

    def a_failing_check(**kwargs):
        return [checks.Error("a page is misconfigured", id="tests.E001")]

    path = tmp_path / "case.json"
    path.write_text(json.dumps(case_for()))
    checks.register(a_failing_check)
    try:
        # As `manage.py` runs a command: with the system checks its class asks for.
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            with pytest.raises(SystemExit) as judged:
                execute_from_command_line(["manage.py", "judge", str(path)])
            # As it was written when judge ran them.
            with pytest.raises(SystemExit) as skipped:
                execute_from_command_line(["manage.py", "judge", str(path), "--skip-checks"])
            # The same checks still stop `manage.py check`.
            with pytest.raises(SystemExit) as checked:
                execute_from_command_line(["manage.py", "check"])
    finally:
        checks.registry.registry.registered_checks.discard(a_failing_check)
    assert judged.value.code == skipped.value.code == 0
    assert checked.value.code == 1


def test_it_follows_an_escalation_to_the_verdict_in_force(fake_llm, make_panel, tmp_path):
    from judgements.models import Panel

    for model in ("strong-a", "strong-b", "strong-c"):
        fake_llm.script(model)
    cheap = make_panel(name="Cheap")
    strong = make_panel(name="Strong", models=("strong-a", "strong-b", "strong-c"))
    Panel.objects.filter(pk=cheap.pk).update(escalate_to=strong)
    fake_llm.script("model-c", votes="RRR")  # 2-1 at level 1: contested, escalated
    case = {"title": "Trip", "content": "A trip to Lyon.", "panel": "Cheap"}
    code, out, err = run_judge(tmp_path, case, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["status"] == "approved" and result["escalation"]["decided_by"] == 2
    assert "round 3: Casper: reject" in err and Judgement.objects.count() == 2
