"""A run's report end to end (judgements/evaluations/run_reports.py): ordinary judgements
on the engine, answered by the fake LLM with known votes per case, the figures worked out
by hand; two runs compared; the panel beside its plain call."""

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judgements.core.errors import InvalidInput
from judgements.evaluations import run_reports, runs, suites
from judgements.models import Judgement, Status
from judgements.models.magi_settings import magi_settings
from tests.support.cases import DEFAULT_MODELS
from tests.support.evaluations import SUITE, VOTES, run_all, script_votes, start

pytestmark = pytest.mark.django_db(transaction=True)


async def test_the_report_gives_the_figures_of_the_scripted_votes(
    fake_llm, suite, user, runner, settings
):
    """Three cases twice; Melchior changes its mind on c1 between the repeats."""
    script_votes(fake_llm)
    magi_settings.MAGI_MODEL_PRICES = {
        "model-a": {"prompt": 1.0, "completion": 10.0, "cached": None},
        "model-b": {"prompt": 1.0, "completion": 10.0, "cached": 1.0},
        "model-c": {"prompt": 1.0, "completion": 10.0, "cached": None},
    }
    run = await sync_to_async(start)(suite, user, repeats=2)
    await run_all(runner, run, repeat=1)
    progress = await sync_to_async(runs.progress)(run)
    # The estimate: the time so far per vote stored (27), times the votes due (27).
    assert isinstance(progress["seconds_left"], int)
    assert {key: value for key, value in progress.items() if key != "seconds_left"} == {
        "total": 6,
        "finished": 3,
        "errors": 0,
        "running": 0,
        "done": False,
        "rounds": [{"round": n, "votes": 9, "of": 18} for n in (1, 2, 3)],
    }
    script_votes(fake_llm, VOTES | {"model-a": {**VOTES["model-a"], "marker-ok": "RRR"}})
    await run_all(runner, run, repeat=2)
    progress = await sync_to_async(runs.progress)(run)
    assert progress == {
        "total": 6,
        "finished": 6,
        "errors": 0,
        "running": 0,
        "done": True,
        "rounds": [{"round": n, "votes": 18, "of": 18} for n in (1, 2, 3)],
        "seconds_left": None,
    }
    report = await sync_to_async(run_reports.report)(run)

    # c1: approved, then rejected (Melchior R R R); c2 rejected; c3 approved, twice.
    assert (report["cases"], report["repeats"], report["judgements"]) == (3, 2, 6)
    assert report["accuracy"] == 3 / 6
    assert report["confusion"] == {
        "approve": {"approve": 1, "reject": 1},
        "reject": {"approve": 2, "reject": 2},
    }
    # Observed 1/2; expected approve 2 of 6, got approve 3 of 6: chance (2*3 + 4*3)/36.
    assert report["kappa"] == 0.0
    assert report["errors"] == 0
    # Round-1 majorities: c1 approve then reject, c2 approve (wrong), c3 reject (right).
    assert report["round1_majority_accuracy"] == 3 / 6
    assert report["deliberation"] == {"fixed": 2, "broke": 2}
    # c2: Melchior in round 2 (others split), Casper in round 3 (with both rejections);
    # c3: Melchior and Balthasar in round 2, against Casper's and each other's rejection.
    assert report["vote_changes"] == 8
    assert report["changes_with_majority"] == 2
    assert report["changes_toward_expected"] == 4
    assert report["changes_away_from_expected"] == 0
    assert report["vote_changes_by_round"] == {"2": 6, "3": 2}
    assert report["agents"] == [
        {
            "name": "Melchior",
            "accuracy": 3 / 4,
            "round1_accuracy": 1 / 4,
            "vote_changes": 4,
            "changes_with_majority": 0,
        },
        {
            "name": "Balthasar",
            "accuracy": 1.0,
            "round1_accuracy": 1.0,
            "vote_changes": 2,
            "changes_with_majority": 0,
        },
        {
            "name": "Casper",
            "accuracy": 2 / 4,
            "round1_accuracy": 2 / 4,
            "vote_changes": 2,
            "changes_with_majority": 2,
        },
    ]
    assert report["unstable_cases"] == ["c1"]
    assert report["attack_success_rate"] == 1.0
    # The fake LLM reports 100 prompt and 20 completion tokens a call: 6 x 9 votes and
    # the plain calls beside them, which a run asks unless told not to: 6 told the rule
    # and 6 x 3 on one criterion each.
    assert report["tokens"]["prompt"] == 7800
    assert report["tokens"]["completion"] == 1560
    cached = report["tokens"]["cached"]
    assert cached is not None and 0 < cached <= 7800
    assert report["cost"] == pytest.approx((7800 + 1560 * 10) / 1_000_000)
    assert report["plain_call"]["panel_tokens"] == 5400 + 1080
    assert report["plain_call"]["plain_tokens"] == 600 + 120
    seconds = report["seconds_per_judgement"]
    assert seconds is not None and seconds > 0


async def test_errors_are_counted_apart(fake_llm, suite, user, runner):
    script_votes(fake_llm)
    fake_llm.scripts["model-c"].failures = {1: ["500"] * magi_settings.MAGI_LLM_MAX_ATTEMPTS}
    # The failures meet Casper's vote, not the run's plain calls beside it.
    fake_llm.scripts["model-c"].vote_failures_only = True
    run = await sync_to_async(start)(suite, user)
    first = await run.judgements.aearliest("pk")
    await runner.run_judgement(first.pk)  # alone, so it takes every failure
    assert (await Judgement.objects.aget(pk=first.pk)).status == Status.ERROR
    await run_all(runner, run)
    progress = await sync_to_async(runs.progress)(run)
    assert (progress["total"], progress["finished"], progress["errors"]) == (3, 3, 1)
    assert progress["done"] and progress["seconds_left"] is None
    report = await sync_to_async(run_reports.report)(run)
    assert report["errors"] == 1
    assert sum(sum(row.values()) for row in report["confusion"].values()) == 2


def test_the_report_takes_a_few_queries_however_many_judgements(fake_llm, suite, user):
    run = start(suite, user, repeats=5)
    with CaptureQueriesContext(connection) as queries:
        report = run_reports.report(run)
    assert report["judgements"] == 15
    # The cases, the judgements, the votes, two token sums and the plain calls on each
    # criterion: the same six for 15 judgements as for one.
    assert len(queries) <= 6


async def test_two_runs_of_one_suite_side_by_side(fake_llm, suite, user, runner):
    script_votes(fake_llm)
    before = await sync_to_async(start)(suite, user, panel_name="Before")
    await run_all(runner, before)
    # After a criteria change, say: Balthasar no longer falls for the injection.
    script_votes(fake_llm, VOTES | {"model-b": {**VOTES["model-b"], "marker-inj": "RRR"}})
    after = await sync_to_async(start)(suite, user, panel_name="After")
    await run_all(runner, after)
    compared = await sync_to_async(run_reports.compare)(before, after)
    assert compared["suite"] == "Gate cases"
    assert (compared["a"]["panel_name"], compared["b"]["panel_name"]) == ("Before", "After")
    assert compared["a"]["run"] == before.pk
    assert compared["a"]["report"]["attack_success_rate"] == 1.0
    assert compared["b"]["report"]["attack_success_rate"] == 0.0
    assert compared["changed_cases"] == ["c3"]


def test_only_runs_of_the_same_suite_compare(fake_llm, suite, user):
    other = suites.import_suite(name="Other", description="", owner=user, data=SUITE)
    with pytest.raises(InvalidInput) as raised:
        run_reports.compare(start(suite, user), start(other, user))
    assert raised.value.errors == {"run": ["Only runs of the same suite can be compared."]}


# --- the panel against one plain call (issue 42) -------------------------------------------


async def test_the_report_shows_the_panel_beside_one_plain_call(fake_llm, suite, user, runner):
    # The panel rejects everything; the plain call (the second opinion's prompt, on the
    # first agent's model) approves everything.
    for model in DEFAULT_MODELS:
        fake_llm.script(model, votes="RRR")
    fake_llm.scripts["model-a"].opinion = "approve"
    run = await sync_to_async(start)(suite, user)
    await run_all(runner, run)
    report = await sync_to_async(run_reports.report)(run)
    found = report["plain_call"]
    assert (found["asked"], found["model"], found["compared"]) == (True, "model-a", 3)
    # c1 expected approve, c2 reject (clean); c3 an injection.
    panel, plain = found["panel"], found["plain"]
    assert (panel["approvable_approved"]["count"], plain["approvable_approved"]["count"]) == (0, 1)
    assert (panel["rejects_rejected"]["count"], plain["rejects_rejected"]["count"]) == (1, 0)
    assert (panel["injections_approved"]["count"], plain["injections_approved"]["count"]) == (0, 1)
    assert found["panel_clean_margin"] == 0
    # The API's answer holds the same comparison.
    answer = await sync_to_async(runs.as_result)(run)
    assert answer.report is not None
    assert answer.report.plain_call.plain.approvable_approved.count == 1


async def test_the_report_says_when_the_plain_call_beats_the_panel(
    fake_llm, suite, user, runner, settings
):
    # The panel approves everything, the reject case c2 too; the plain call, on
    # model-c, answers with model-c's round-1 vote: it rejects c2.
    magi_settings.MAGI_CHECK_MODEL = "model-c"
    for model in DEFAULT_MODELS:
        fake_llm.script(model, votes="AAA")
    fake_llm.scripts["model-c"].votes_when = {"marker-fix": "RAA", "marker-inj": "RRR"}
    run = await sync_to_async(start)(suite, user)
    await run_all(runner, run)
    found = (await sync_to_async(run_reports.report)(run))["plain_call"]
    assert found["model"] == "model-c"
    assert found["panel"]["clean_accuracy"]["count"] == 1
    assert found["plain"]["clean_accuracy"]["count"] == 2
    assert found["panel_clean_margin"] == -1
