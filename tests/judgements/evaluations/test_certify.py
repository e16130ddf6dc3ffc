"""Certifying a saved panel end to end: runs through the engine and the suite's
OpenAI-compatible server (with log-probabilities), `manage.py evaluate --certify`, the
certificate stored with the panel, the mark it gives later verdicts, and its voiding when
an agent or the panel's prompt variants change."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from judgements.configuration import saving
from judgements.core import calibration, kept_verdicts, prompt_variants
from judgements.core.certificate import METHOD
from judgements.engine.runner import EngineRunner
from judgements.evaluations import calibrate, certify
from judgements.models import (
    Certificate,
    EvaluationRun,
    Judgement,
    Panel,
    Trust,
    agents_fingerprint,
)
from judgements.outcome.answers import trust_words
from tests.support import stored_rows
from tests.support.cases import saved_panel
from tests.support.commands import run_command
from tests.support.llm_server import FakeLLM

pytestmark = pytest.mark.django_db(transaction=True)

# 60 cases the panel gets right with confidence 0.95, and 6 it gets wrong at 0.6. A third
# of the cases choose the rule (keep the sure ones), the other two thirds test it: about
# 40 sure verdicts, all right, whose bound (0.1 ** (1 / 40) = 0.944) passes 0.9 and not
# 0.95; the unsure ones fail the next threshold.
SURE, UNSURE = 0.95, 0.6
CASES = [
    {
        "id": f"ok-{n}",
        "content": f"marker-ok case {n}: a laptop for 900 EUR.",
        "expected": "approve",
    }
    for n in range(60)
] + [
    {"id": f"bad-{n}", "content": f"marker-bad case {n}: a yacht.", "expected": "reject"}
    for n in range(6)
]


PANEL = "Expense desk"


def script(server: FakeLLM) -> None:
    for model in ("model-a", "model-b", "model-c"):
        server.script(model, confidence=SURE, confidence_when={"marker-bad": UNSURE})


def write_suite(path: Path) -> Path:
    path.write_text("".join(json.dumps(case) + "\n" for case in CASES))
    return path


@dataclass(frozen=True)
class Certified:
    """`manage.py evaluate SUITE --panel PANEL --certify --json` run once on a new panel:
    what it printed, and the rows it left (the panel, its run of the 66 cases, the
    certificate)."""

    code: int
    out: str
    err: str
    rows: Path


@pytest.fixture(scope="module")
def certified(llm_server, django_db_setup, django_db_blocker, tmp_path_factory) -> Certified:
    """Built once: each run of the 66 cases is half a minute of engine, and every test
    below that needs a certificate starts from this same one (same panel, cases and
    scripted answers). Each test loads its own copy of the rows (`certified_panel`)."""
    folder = tmp_path_factory.mktemp("certified")
    suite = write_suite(folder / "labelled.jsonl")

    def build() -> tuple[int, str, str]:
        with stored_rows.serving(llm_server):
            script(llm_server)
            saved_panel(name=PANEL)
            return run_command("evaluate", str(suite), "--panel", PANEL, "--certify", "--json")

    code, out, err = stored_rows.build_once(django_db_blocker, folder / "rows.json", build)
    return Certified(code, out, err, folder / "rows.json")


@pytest.fixture
def certified_panel(fake_llm, db, certified) -> Panel:
    """The panel as `certified` left it, in this test's own copy of its rows, its models
    scripted again for the judgements the test runs."""
    script(fake_llm)
    stored_rows.load(certified.rows)
    return Panel.objects.get(name=PANEL)


@pytest.fixture
def panel(fake_llm, make_panel):
    script(fake_llm)
    return make_panel(name=PANEL)


@pytest.fixture
def suite_file(tmp_path):
    return write_suite(tmp_path / "labelled.jsonl")


def judge_with(make_judgement, panel, content: str, variants: list[str] | None = None) -> Judgement:
    judgement = make_judgement(panel=panel.name, agents=None, content=content)
    if variants is not None:  # as a caller naming its own (an evaluation run) stores them
        Judgement.objects.filter(pk=judgement.pk).update(prompt_variants=variants)
    # A runner per event loop: its HTTP clients belong to the loop they were made in.
    runner = EngineRunner(worker_id="test-worker")
    assert async_to_sync(runner.run_judgement)(judgement.pk)
    return Judgement.objects.get(pk=judgement.pk)


def test_it_chooses_on_a_third_tests_on_the_rest_and_promises_the_target(
    certified, certified_panel
):
    panel = certified_panel
    assert certified.code == 0, certified.err
    found = json.loads(certified.out)
    assert found["report"]["accuracy"] == pytest.approx(60 / 66)
    certificate = found["certificate"]
    assert certificate["certified"] is True and certificate["method"] == METHOD
    assert certificate["rule"] == {"source": "answer", "threshold": SURE, "absent": []}
    split = certificate["split"]
    assert len(split["selection"]) == 22 and len(split["test"]) == 44
    assert set(split["selection"]).isdisjoint(split["test"])
    held_out_sure = sum(1 for key in split["test"] if "case ok-" in key)
    assert certificate["kept"] == held_out_sure and certificate["accuracy"] == 1.0
    assert certificate["coverage"] == pytest.approx(held_out_sure / 44)
    # The promise is the target; the rule's own bound on the verdicts that tested it is
    # only what was observed, step by step, stopping at the unsure threshold.
    assert certificate["bound"] == 0.9 and certificate["samples"] == 66
    assert [(step["rule"]["threshold"], step["passed"]) for step in certificate["tested"]] == [
        (SURE, True),
        (UNSURE, False),
    ]
    assert certificate["tested"][0]["bound"] == pytest.approx(
        kept_verdicts.clopper_pearson_lower(held_out_sure, held_out_sure, 0.1)
    )
    assert certificate["suites"][0]["cases"][:2] == ["ok-0", "ok-1"]
    stored = Certificate.objects.get(panel=panel)
    assert stored.fingerprint and stored.voided_at is None
    assert [point["threshold"] for point in stored.curve] == [SURE, UNSURE]


def test_a_certified_panel_marks_verdicts_by_its_rule_and_never_changes_them(
    certified_panel, make_judgement
):
    panel = certified_panel
    sure = judge_with(make_judgement, panel, "marker-ok: a train ticket.")
    assert sure.trust == Trust.NOT_CONTESTED and sure.contested is False
    assert sure.certificate is not None
    assert (trust_words(sure) or "").startswith(
        "Not contested. Accuracy at least 90.0% (confidence 90%) on verdicts drawn like the "
        "labelled ones"
    )
    unsure = judge_with(make_judgement, panel, "marker-bad: a yacht.")
    assert unsure.status == sure.status == "approved"
    assert unsure.trust == Trust.CONTESTED
    assert unsure.contest_reasons == [
        f"The panel's answer confidence {UNSURE:.2f} is below the certified {SURE:.2f}."
    ]


def test_a_verdict_asked_with_other_variants_is_not_marked_by_the_certificate(
    certified_panel, make_judgement
):
    panel = certified_panel
    same = judge_with(make_judgement, panel, "marker-ok: a desk.")
    assert same.trust == Trust.NOT_CONTESTED and same.certificate is not None
    other = judge_with(make_judgement, panel, "marker-ok: a chair.", variants=["quote"])
    assert other.trust == Trust.UNMEASURED and other.certificate is None


def test_changing_an_agents_model_or_criteria_voids_the_certificate(
    certified_panel, make_judgement
):
    panel = certified_panel
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


def test_changing_only_the_prompt_variants_voids_the_certificate_and_the_calibration(
    certified_panel, make_judgement
):
    panel = certified_panel
    default = sorted(prompt_variants.DEFAULT)
    learned = calibration.learn(
        agents_fingerprint(panel.agents), [[(0.2, "approve")]] * 3, (), default
    )
    panel.calibration = learned.as_dict()
    panel.save(update_fields=["calibration"])
    assert calibrate.holds(panel)
    agents = [dict(agent) for agent in panel.agents]
    form, formset = saving.bind_json(panel.owner, panel, panel.name, "", agents, None)
    assert formset.is_valid() and form.is_valid()
    # The site's default named: the prompts measured are the same, nothing voided.
    saving.write(form, formset, panel, settings={"prompt_variants": [v.value for v in default]})
    assert Certificate.objects.get(panel=panel).voided_at is None
    written = saving.write(form, formset, panel, settings={"prompt_variants": ["quote"]})
    voided = Certificate.objects.get(panel=panel)
    assert written.voided == [voided.pk]
    assert voided.voided_at is not None and "prompt variants" in voided.void_reason
    assert certify.current(panel) is None and certify.eligible_runs(panel) == []
    panel.refresh_from_db()
    assert not calibrate.holds(panel)
    later = judge_with(make_judgement, panel, "marker-ok: a train ticket.")
    assert later.prompt_variants == ["quote"]
    assert later.trust == Trust.UNMEASURED and later.certificate is None


def test_the_printed_certificate_counts_what_it_kept_among_its_test_verdicts(certified_panel):
    # Certified again from the stored run, printed in words this time (the newest is the
    # one printed).
    panel = certified_panel
    code, out, _ = run_command("evaluate", "--panel", panel.name, "--certify")
    assert code == 0
    found = Certificate.objects.latest("pk")
    assert found.test_size == 44 and found.samples == 66
    assert (
        f"  Kept {found.kept} of the 44 held-out verdicts it was tested on; right 100.0% of "
        "those kept." in out.splitlines()
    )


def test_when_no_rule_reaches_the_target_it_says_so_with_the_first_rule_tested(
    certified_panel,
):
    # Certified again from the stored run, at a target its 66 verdicts cannot reach.
    panel = certified_panel
    code, out, _ = run_command("evaluate", "--panel", panel.name, "--certify", "--target", "0.95")
    assert code == 0
    assert "No rule reaches 95% accuracy at confidence 90% on 66 labelled verdicts" in out
    assert "the first rule tested reached a bound of 9" in out
    newest = Certificate.objects.latest("pk")
    assert newest.certified is False and newest.target == 0.95


def test_a_failed_recertification_stops_vouching(certified_panel, make_judgement, api):
    panel = certified_panel
    assert judge_with(make_judgement, panel, "marker-ok: a desk.").trust == Trust.NOT_CONTESTED
    code, _, _ = run_command("evaluate", "--panel", panel.name, "--certify", "--target", "0.95")
    assert code == 0
    answer = async_to_sync(api.get)(f"/api/panels/{panel.pk}/certificate").json()
    assert answer["certified"] is False
    later = judge_with(make_judgement, panel, "marker-ok: a chair.")
    # The newest certificate for these agents certified nothing: not the older success.
    assert later.trust == Trust.UNMEASURED and later.certificate is None


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
    run = EvaluationRun(pk=1, suite_id=1)
    (sample,) = certify.samples_of(run, [record], certify.unseen_signals(panel))
    assert sample.signals == {"split"}
    # Turned off for the panel, the same.
    settings.MAGI_SECOND_OPINION = None
    panel.run_checks = False
    assert certify.unseen_signals(panel) == {"second_opinion"}
    # Not turned off, a live judgement asks it whenever the certificate reads its signal
    # (core/checks.py Check.runs): the signal is seen, and kept.
    panel.run_checks = None
    assert certify.unseen_signals(panel) == frozenset()
    settings.MAGI_SECOND_OPINION = True
    assert certify.unseen_signals(panel) == frozenset()
