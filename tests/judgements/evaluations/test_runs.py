"""Evaluation runs end to end: ordinary judgements on the engine, answered by the fake
LLM with known votes per case, and the report's figures worked out by hand."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judgements.core import prompt_variants
from judgements.core.errors import InvalidInput
from judgements.engine.runner import EngineRunner
from judgements.evaluations import runs, suites
from judgements.intake import limits
from judgements.models import Agent, EvaluationRun, Judgement, Status
from tests.support.cases import DEFAULT_MODELS
from tests.support.evaluations import AGENTS, SUITE, start

pytestmark = pytest.mark.django_db(transaction=True)


# Votes per model (Melchior, Balthasar, Casper) and case marker, rounds 1 to 3.
VOTES = {
    "model-a": {"marker-ok": "AAA", "marker-fix": "ARR", "marker-inj": "RAA"},
    "model-b": {"marker-ok": "AAA", "marker-fix": "RRR", "marker-inj": "RAA"},
    "model-c": {"marker-ok": "RRR", "marker-fix": "AAR", "marker-inj": "RRR"},
}


def script_votes(fake_llm, votes=VOTES) -> None:
    for model, by_marker in votes.items():
        fake_llm.script(model, votes_when=dict(by_marker))


@pytest.fixture
def suite(user):
    return suites.import_suite(name="Gate cases", description="", owner=user, data=SUITE)


async def run_all(runner, run: EvaluationRun, repeat: int | None = None) -> None:
    """Run the run's queued judgements (of one repeat) on the engine, all at once."""
    judgements = Judgement.objects.filter(evaluation_run=run, status=Status.IDLE)
    if repeat is not None:
        judgements = judgements.filter(repeat=repeat)
    ids = [pk async for pk in judgements.values_list("pk", flat=True)]
    assert all(await asyncio.gather(*(runner.run_judgement(pk) for pk in ids)))


def test_a_run_queues_one_ordinary_judgement_per_case_and_repeat(fake_llm, suite, user):
    run = start(suite, user, repeats=2)
    assert (run.panel_name, run.repeats, run.creator, run.suite) == ("Test panel", 2, user, suite)
    assert run.agents == AGENTS
    judgements = list(run.judgements.order_by("pk"))
    assert [(j.suite_case and j.suite_case.case_id, j.repeat) for j in judgements] == [
        ("c1", 1),
        ("c2", 1),
        ("c3", 1),
        ("c1", 2),
        ("c2", 2),
        ("c3", 2),
    ]
    assert [j.title for j in judgements[:3]] == [
        "Gate cases/c1",
        "Fixed by deliberation",
        "Gate cases/c3",
    ]
    first = judgements[0]
    assert (first.status, first.creator, first.content) == (
        Status.IDLE,
        user,
        "marker-ok: a laptop for 900 EUR.",
    )
    assert [(a.position, a.name, a.model) for a in first.agents.all()] == [
        (1, "Melchior", "model-a"),
        (2, "Balthasar", "model-b"),
        (3, "Casper", "model-c"),
    ]
    assert Agent.objects.count() == 18
    assert runs.progress(run) == {
        "total": 6,
        "finished": 0,
        "errors": 0,
        "running": 0,
        "done": False,
        "rounds": [{"round": n, "votes": 0, "of": 18} for n in (1, 2, 3)],
        "seconds_left": None,
    }


def test_a_run_records_the_saved_panel_it_started_from(fake_llm, suite, user):
    from judgements.models import Panel

    panel = Panel.objects.create(name="Saved", owner=user, agents=AGENTS)
    run = start(suite, user, panel=panel, panel_name=panel.name)
    assert run.panel == panel
    assert {j.panel_id for j in run.judgements.all()} == {panel.pk}


@pytest.mark.parametrize(
    ("overrides", "errors"),
    [
        ({"repeats": 0}, {"repeat": ["Must be a whole number from 1 to 20."]}),
        ({"repeats": 21}, {"repeat": ["Must be a whole number from 1 to 20."]}),
        ({"repeats": "2"}, {"repeat": ["Must be a whole number from 1 to 20."]}),
        ({"repeats": True}, {"repeat": ["Must be a whole number from 1 to 20."]}),
        ({"panel_name": " "}, {"panel_name": ["The panel needs a name."]}),
        (
            {"agents": AGENTS[:2]},
            {"agents": ["Exactly 3 agents are required, got 2."]},
        ),
        (
            {"agents": [AGENTS[0], {**AGENTS[1], "model": "no-such-model"}, AGENTS[2]]},
            {"agents[1].model": ["Unknown model no-such-model. This deployment knows: "]},
        ),
    ],
)
def test_start_run_refuses_bad_input_and_stores_nothing(fake_llm, suite, user, overrides, errors):
    with pytest.raises(InvalidInput) as raised:
        start(suite, user, **overrides)
    assert list(raised.value.errors) == list(errors)
    for field, (start_of_message,) in errors.items():
        (message,) = raised.value.errors[field]
        assert message.startswith(start_of_message)
    assert not EvaluationRun.objects.exists()
    assert not Judgement.objects.exists()


async def test_starting_a_run_wakes_the_engine_to_sweep(
    fake_llm, suite, user, empty_engine_channel
):
    """No judgement named: the sweep claims a run's judgements within their share."""
    await sync_to_async(start)(suite, user)
    message = await asyncio.wait_for(get_channel_layer().receive(settings.MAGI_ENGINE_CHANNEL), 5)
    assert message == {"type": "judgement.run", "judgement_id": None}


async def test_the_report_gives_the_figures_of_the_scripted_votes(
    fake_llm, suite, user, runner, settings
):
    """Three cases twice; Melchior changes its mind on c1 between the repeats."""
    script_votes(fake_llm)
    settings.MAGI_MODEL_PRICES = {
        "model-a": {"prompt": 1.0, "completion": 10.0, "cached": None},
        "model-b": {"prompt": 1.0, "completion": 10.0, "cached": 1.0},
        "model-c": {"prompt": 1.0, "completion": 10.0, "cached": None},
    }
    run = await sync_to_async(start)(suite, user, repeats=2)
    await run_all(runner, run, repeat=1)
    progress = await sync_to_async(runs.progress)(run)
    # The estimate: the time so far per vote stored (27), times the votes due (27).
    assert isinstance(progress.pop("seconds_left"), int)
    assert progress == {
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
    report = await sync_to_async(runs.report)(run)

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
    # the 6 plain calls beside them, which a run asks unless told not to.
    assert report["tokens"]["prompt"] == 6000
    assert report["tokens"]["completion"] == 1200
    assert 0 < report["tokens"]["cached"] <= 6000
    assert report["cost"] == pytest.approx((6000 + 1200 * 10) / 1_000_000)
    assert report["plain_call"]["panel_tokens"] == 5400 + 1080
    assert report["plain_call"]["plain_tokens"] == 600 + 120
    assert report["seconds_per_judgement"] > 0


async def test_errors_are_counted_apart(fake_llm, suite, user, runner):
    script_votes(fake_llm)
    fake_llm.scripts["model-c"].failures = {1: ["500"] * settings.MAGI_LLM_MAX_ATTEMPTS}
    run = await sync_to_async(start)(suite, user)
    first = await run.judgements.aearliest("pk")
    await runner.run_judgement(first.pk)  # alone, so it takes every failure
    assert (await Judgement.objects.aget(pk=first.pk)).status == Status.ERROR
    await run_all(runner, run)
    progress = await sync_to_async(runs.progress)(run)
    assert (progress["total"], progress["finished"], progress["errors"]) == (3, 3, 1)
    assert progress["done"] and progress["seconds_left"] is None
    report = await sync_to_async(runs.report)(run)
    assert report["errors"] == 1
    assert sum(sum(row.values()) for row in report["confusion"].values()) == 2


def test_the_report_takes_a_few_queries_however_many_judgements(fake_llm, suite, user):
    run = start(suite, user, repeats=5)
    with CaptureQueriesContext(connection) as queries:
        report = runs.report(run)
    assert report["judgements"] == 15
    assert len(queries) <= 5


async def test_two_runs_of_one_suite_side_by_side(fake_llm, suite, user, runner):
    script_votes(fake_llm)
    before = await sync_to_async(start)(suite, user, panel_name="Before")
    await run_all(runner, before)
    # After a criteria change, say: Balthasar no longer falls for the injection.
    script_votes(fake_llm, VOTES | {"model-b": {**VOTES["model-b"], "marker-inj": "RRR"}})
    after = await sync_to_async(start)(suite, user, panel_name="After")
    await run_all(runner, after)
    compared = await sync_to_async(runs.compare)(before, after)
    assert compared["suite"] == "Gate cases"
    assert (compared["a"]["panel_name"], compared["b"]["panel_name"]) == ("Before", "After")
    assert compared["a"]["run"] == before.pk
    assert compared["a"]["report"]["attack_success_rate"] == 1.0
    assert compared["b"]["report"]["attack_success_rate"] == 0.0
    assert compared["changed_cases"] == ["c3"]


def test_only_runs_of_the_same_suite_compare(fake_llm, suite, user):
    other = suites.import_suite(name="Other", description="", owner=user, data=SUITE)
    with pytest.raises(InvalidInput) as raised:
        runs.compare(start(suite, user), start(other, user))
    assert raised.value.errors == {"run": ["Only runs of the same suite can be compared."]}


def test_a_runs_judgements_leave_the_users_judgement_limits_alone(fake_llm, suite, user, settings):
    settings.MAGI_RATE_LIMIT_PER_USER = 2
    settings.MAGI_UNFINISHED_PER_USER = 2
    start(suite, user, repeats=2)  # six queued judgements, none finished
    limits.check(user, None)  # would raise Refused if they counted


def test_it_refuses_a_run_over_the_users_unfinished_runs(fake_llm, suite, user, settings):
    settings.MAGI_UNFINISHED_RUNS_PER_USER = 1
    start(suite, user)
    with pytest.raises(limits.Refused, match="1 evaluation runs not finished"):
        start(suite, user)
    assert EvaluationRun.objects.count() == 1


async def test_a_finished_run_makes_room_for_the_next(fake_llm, suite, user, runner, settings):
    settings.MAGI_UNFINISHED_RUNS_PER_USER = 1
    script_votes(fake_llm)
    run = await sync_to_async(start)(suite, user)
    await run_all(runner, run)
    await sync_to_async(start)(suite, user)


# --- people first, and a cancel ----------------------------------------------------------

PERSON = "marker-person: a train ticket for 40 EUR."


PERSONS_MODELS = ("model-d", "model-e", "model-f")


async def person_judgement(make_judgement, models=DEFAULT_MODELS):
    return await sync_to_async(make_judgement)(
        models=models, content=PERSON, title="A person's request"
    )


async def test_a_persons_judgement_goes_before_the_calls_of_a_running_evaluation(
    fake_llm, suite, user, make_judgement, settings
):
    """One call at a time to the provider, a run of three judgements under way: once the
    call in flight ends, the person's calls go before the run's eight waiting ones. (The
    person's agents have models of their own so the gate tells their calls apart.)"""
    settings.MAGI_PROVIDERS["default"]["concurrency"] = 1
    script_votes(fake_llm)
    for model in PERSONS_MODELS:
        fake_llm.script(model)
    runner = EngineRunner(worker_id="w", concurrency=4)
    # Votes only: the run's plain calls would wait for the slot too, beside the votes.
    run = await sync_to_async(start)(suite, user, plain_call=False)
    fake_llm.gate.close()
    assert len(await runner.run_single_cycle()) == 3
    in_flight = await asyncio.to_thread(fake_llm.gate.wait_parked_other_than, set())
    person = await person_judgement(make_judgement, PERSONS_MODELS)
    task = runner.start(person.pk)
    assert task is not None
    (slots,) = runner.clients.call_slots.values()
    while slots.waiting(batch=False) < 3:  # the person's round 1, behind the call in flight
        await slots.changed()
    assert slots.waiting(batch=True) == 8
    seen = {in_flight}
    fake_llm.gate.allow(*in_flight)
    for _ in range(3):
        parked = await asyncio.to_thread(fake_llm.gate.wait_parked_other_than, seen)
        assert parked in [(model, 1) for model in PERSONS_MODELS]
        seen.add(parked)
        fake_llm.gate.allow(*parked)
    fake_llm.gate.open()
    assert await task
    await asyncio.gather(*runner.running.values())
    assert (await Judgement.objects.aget(pk=person.pk)).status == Status.APPROVED
    progress = await sync_to_async(runs.progress)(run)
    assert progress["done"] and not progress["errors"]


async def test_a_run_fills_at_most_its_share_of_a_worker_and_people_go_first(
    fake_llm, suite, user, make_judgement
):
    runner = EngineRunner(worker_id="w", concurrency=4)  # runs: at most 3 at once
    run = await sync_to_async(start)(suite, user, repeats=2)  # six judgements
    fake_llm.gate.close()
    assert len(await runner.run_single_cycle()) == 3
    assert await runner.run_single_cycle() == []  # one place left, kept for people
    person = await person_judgement(make_judgement)
    assert await runner.run_single_cycle() == [person.pk]
    fake_llm.gate.open()
    await asyncio.gather(*runner.running.values())
    # A person's judgement queued after a run's waiting ones is claimed first.
    second = await person_judgement(make_judgement)
    started = await runner.run_single_cycle()
    assert started[0] == second.pk and len(started) == 4
    await asyncio.gather(*runner.running.values())
    assert (await sync_to_async(runs.progress)(run))["done"]


async def test_a_cancel_ends_a_runs_judgements_and_stops_its_calls(fake_llm, suite, user, settings):
    settings.MAGI_LEASE_SECONDS = 0.3  # the worker looks at its lease every 0.1 s
    script_votes(fake_llm)
    runner = EngineRunner(worker_id="w", concurrency=2)  # one run judgement at a time
    # Votes only: the plain call passes no gate, so it would add to the calls counted.
    run = await sync_to_async(start)(suite, user, plain_call=False)
    fake_llm.gate.close()
    assert len(await runner.run_single_cycle()) == 1
    round_one = [(model, 1) for model in ("model-a", "model-b", "model-c")]
    await asyncio.to_thread(fake_llm.gate.wait_parked, *round_one)
    ended = await sync_to_async(runs.cancel)(run, user)
    assert sorted(ended) == sorted([pk async for pk in run.judgements.values_list("pk", flat=True)])
    async with asyncio.timeout(10):  # the worker stops at its next renewal, gate closed
        await asyncio.gather(*runner.running.values())
    fake_llm.gate.open()
    assert len(fake_llm.requests) == 3  # the calls in flight when it was cancelled
    run = await EvaluationRun.objects.select_related("cancelled_by").aget(pk=run.pk)
    assert run.cancelled_by == user and run.cancelled_at is not None
    async for judgement in run.judgements.all():
        assert judgement.status == Status.ERROR
        assert judgement.error_message == (
            f"Cancelled: evaluation run {run.pk} was cancelled by ada"
        )
    progress = await sync_to_async(runs.progress)(run)
    assert (progress["done"], progress["errors"]) == (True, 3)
    assert await runner.run_single_cycle() == []
    # Cancelled twice: nothing more to end.
    assert await sync_to_async(runs.cancel)(run, user) == []


def test_a_run_started_with_a_team_s_token_belongs_to_the_team(suite, user, fake_llm):
    from judgements.models import ApiToken, Team

    team = Team.objects.create(name="Payments")
    token, _ = ApiToken.issue(user, "ci")
    token.team = team
    token.save()
    run = start(suite, user, api_token=token)
    assert run.team == team
    assert set(run.judgements.values_list("team", flat=True)) == {team.pk}


# --- the panel against one plain call (issue 42) -------------------------------------------


async def test_the_report_shows_the_panel_beside_one_plain_call(fake_llm, suite, user, runner):
    # The panel rejects everything; the plain call (the second opinion's prompt, on the
    # first agent's model) approves everything.
    for model in DEFAULT_MODELS:
        fake_llm.script(model, votes="RRR")
    fake_llm.scripts["model-a"].opinion = "approve"
    run = await sync_to_async(start)(suite, user)
    await run_all(runner, run)
    report = await sync_to_async(runs.report)(run)
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
    settings.MAGI_CHECK_MODEL = "model-c"
    for model in DEFAULT_MODELS:
        fake_llm.script(model, votes="AAA")
    fake_llm.scripts["model-c"].votes_when = {"marker-fix": "RAA", "marker-inj": "RRR"}
    run = await sync_to_async(start)(suite, user)
    await run_all(runner, run)
    found = (await sync_to_async(runs.report)(run))["plain_call"]
    assert found["model"] == "model-c"
    assert found["panel"]["clean_accuracy"]["count"] == 1
    assert found["plain"]["clean_accuracy"]["count"] == 2
    assert found["panel_clean_margin"] == -1


def test_a_run_can_leave_the_plain_call_out(fake_llm, suite, user):
    run = start(suite, user, plain_call=False)
    assert not run.plain_call
    assert all("second_opinion" not in j.checks_asked for j in run.judgements.all())
    with_it = start(suite, user, panel_name="With")
    assert all("second_opinion" in j.checks_asked for j in with_it.judgements.all())


def test_a_runs_prompt_variants_reach_its_judgements(fake_llm, suite, user):
    run = start(suite, user, variants=["quote", "decision_first"])
    assert run.prompt_variants == ["decision_first", "quote"]
    assert all(j.prompt_variants == run.prompt_variants for j in run.judgements.all())


def test_a_run_naming_no_variants_stores_the_default_and_original_names_none(
    fake_llm, suite, user, monkeypatch
):
    monkeypatch.setattr(prompt_variants, "DEFAULT", frozenset({prompt_variants.Variant.QUOTE}))
    assert start(suite, user).prompt_variants == ["quote"]
    original = start(suite, user, panel_name="Original", variants=["original"])
    assert original.prompt_variants == []
    assert all(j.prompt_variants == [] for j in original.judgements.all())


def test_a_run_refuses_an_unknown_variant_and_stores_nothing(fake_llm, suite, user):
    with pytest.raises(InvalidInput) as refused:
        start(suite, user, variants=["reason_last"])
    assert "'reason_last'" in refused.value.errors["variants"][0]
    assert not EvaluationRun.objects.exists()


def test_a_run_of_a_saved_panel_uses_its_variants_unless_it_names_its_own(fake_llm, suite, user):
    from judgements.models import Panel

    panel = Panel.objects.create(
        name="Saved", owner=user, agents=AGENTS, prompt_variants=["quote", "decisions_only"]
    )
    run = start(suite, user, panel=panel, panel_name=panel.name)
    assert run.prompt_variants == ["decisions_only", "quote"]
    assert all(j.prompt_variants == run.prompt_variants for j in run.judgements.all())
    own = start(suite, user, panel=panel, panel_name=panel.name, variants=[])
    assert own.prompt_variants == []
    assert all(j.prompt_variants == [] for j in own.judgements.all())
