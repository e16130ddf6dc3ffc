"""Learning a panel's calibration from its evaluation runs, end to end: runs through the
engine and the suite's OpenAI-compatible server (with log-probabilities), the offsets
stored with the panel, and the calibrated variant reading them."""

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth import get_user_model

from judgements.core import calibration
from judgements.core.errors import InvalidInput
from judgements.engine.runner import EngineRunner
from judgements.evaluations import calibrate, runs, suites
from judgements.models import ChainEntry, EntryKind, EvaluationRun, Panel
from tests.support import stored_rows
from tests.support.calibration import (
    LEANING_CASES,
    certificate_of,
    leaning_panel,
    script_leaning,
)
from tests.support.cases import saved_panel

pytestmark = pytest.mark.django_db(transaction=True)

CASES = LEANING_CASES
OWNER = "ada"


@pytest.fixture
def panel(fake_llm, make_panel):
    return leaning_panel(fake_llm, make_panel)


@dataclass(frozen=True)
class Leaning:
    """The leaning panel, its owner's suite of the cases and one finished run of it asked
    with decision_first, stored once (`leaning`)."""

    rows: Path
    run: int


@pytest.fixture(scope="module")
def leaning(llm_server, django_db_setup, django_db_blocker, tmp_path_factory) -> Leaning:
    """Built once: most tests below learn from the same run (same panel, cases and scripted
    answers); each loads its own copy of the rows (`run_panel`)."""
    rows = tmp_path_factory.mktemp("leaning") / "rows.json"

    def build() -> int:
        with stored_rows.serving(llm_server):
            panel = leaning_panel(llm_server, saved_panel)
            owner = get_user_model().objects.create_user(OWNER)
            return finished_run(panel, owner, ["decision_first"]).pk

    run = stored_rows.build_once(django_db_blocker, rows, build, ("auth.user", "judgements"))
    return Leaning(rows, run)


@pytest.fixture
def run_panel(fake_llm, db, leaning) -> tuple[Panel, EvaluationRun]:
    """The leaning panel and its finished decision_first run, in this test's own copy of
    the rows, its models scripted again for any run the test adds."""
    script_leaning(fake_llm)
    stored_rows.load(leaning.rows)
    run = EvaluationRun.objects.select_related("panel", "creator").get(pk=leaning.run)
    assert run.panel is not None
    return run.panel, run


def finished_run(panel, user, variants):
    data = "".join(json.dumps(case) + "\n" for case in CASES)
    suite = suites.import_suite(name=f"Labelled {variants}", description="", owner=user, data=data)
    run = runs.start_run(
        panel=panel,
        agents=panel.agents,
        panel_name=panel.name,
        suite=suite,
        repeats=1,
        creator=user,
        plain_call=False,
        variants=variants,
    )
    runner = EngineRunner(worker_id="test-worker")

    async def run_all() -> None:
        for judgement_id in [j.pk async for j in run.judgements.all()]:
            assert await runner.run_judgement(judgement_id)

    async_to_sync(run_all)()
    return run


def test_it_learns_an_offset_that_turns_the_lean_around(run_panel):
    panel, run = run_panel
    learned = calibrate.learn(panel).calibration
    assert learned.samples == (16, 16, 16) and learned.runs == (run.pk,)
    for offset in learned.offsets:
        assert offset is not None
        assert calibration.calibrated_vote(0.2, offset) == "approve"
        assert calibration.calibrated_vote(0.01, offset) == "reject"
    panel.refresh_from_db()
    assert calibration.PanelCalibration.from_dict(panel.calibration) == learned


def test_it_learns_only_from_runs_asked_the_same_way(panel, user):
    finished_run(panel, user, [])
    with pytest.raises(InvalidInput) as refused:
        calibrate.learn(panel)
    assert "decision_first" in refused.value.errors["runs"][0]
    panel.refresh_from_db()
    assert panel.calibration is None
    assert calibrate.learn(panel, variants=[]).calibration.offsets[0] is not None


def test_it_learns_under_the_panels_own_variants_by_default(run_panel):
    panel, asked_decision_first = run_panel
    panel.prompt_variants = []
    panel.save(update_fields=["prompt_variants"])
    run = finished_run(panel, asked_decision_first.creator, [])
    assert calibrate.learn(panel).calibration.runs == (run.pk,)


def test_it_holds_only_while_the_agents_and_variants_stay(run_panel):
    panel, _ = run_panel
    calibrate.learn(panel)
    panel.refresh_from_db()
    assert calibrate.holds(panel)
    # Turning `calibrated` off keeps the prompts it was learned under: it still holds.
    panel.prompt_variants = ["decision_first"]
    assert calibrate.holds(panel)
    panel.prompt_variants = ["decision_first", "quote", "calibrated"]
    assert not calibrate.holds(panel)


def test_too_few_labels_store_nothing_and_keep_what_was_learned(run_panel):
    panel, first = run_panel
    user = first.creator
    before = calibrate.learn(panel).calibration
    panel.refresh_from_db()
    short = suites.import_suite(
        name="Two cases", description="", owner=user, data=json.dumps(CASES[0]) + "\n"
    )
    run = runs.start_run(
        panel=panel,
        agents=panel.agents,
        panel_name=panel.name,
        suite=short,
        repeats=1,
        creator=user,
        plain_call=False,
        variants=["decision_first"],
    )
    async_to_sync(EngineRunner(worker_id="test-worker").run_judgement)(run.judgements.get().pk)
    learned = calibrate.learn(panel, run_ids=[run.pk]).calibration
    assert learned.offsets == (None, None, None) and learned.samples == (1, 1, 1)
    panel.refresh_from_db()
    assert calibration.PanelCalibration.from_dict(panel.calibration) == before


def test_it_names_an_unknown_variant(panel):
    with pytest.raises(InvalidInput) as refused:
        calibrate.learn(panel, variants=["reason_last"])
    assert "reason_last" in refused.value.errors["variants"][0]


def test_a_new_calibration_voids_the_certificates_measured_under_the_old(run_panel):
    """The calibrated variant's decisions read the offsets: a certificate measured on the
    decisions the old offsets made no longer describes the panel."""
    panel, _ = run_panel
    made = certificate_of(panel)
    learned = calibrate.learn(panel)
    made.refresh_from_db()
    assert learned.voided == [made.pk]
    assert made.voided_at is not None and "calibration" in made.void_reason
    assert ChainEntry.objects.filter(kind=EntryKind.CERTIFICATE_VOIDED).count() == 1
    # The same offsets again change no decision: a certificate made since holds.
    again = certificate_of(panel)
    assert calibrate.learn(panel).voided == []
    again.refresh_from_db()
    assert again.voided_at is None


def test_a_calibration_the_panel_does_not_read_voids_nothing(run_panel):
    panel, _ = run_panel
    panel.prompt_variants = ["decision_first"]
    panel.save(update_fields=["prompt_variants"])
    made = certificate_of(panel)
    assert calibrate.learn(panel).voided == []
    made.refresh_from_db()
    assert made.voided_at is None
