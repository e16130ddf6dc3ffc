"""Evaluation runs end to end: ordinary judgements on the engine, answered by the fake
LLM with known votes per case; started, refused, followed, cancelled (their report:
test_run_reports.py)."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings

from judgements.core import prompt_variants
from judgements.core.errors import InvalidInput, Refused
from judgements.engine.runner import EngineRunner
from judgements.evaluations import runs
from judgements.intake import limits
from judgements.models import Agent, EvaluationRun, Judgement, Status
from tests.support.cases import DEFAULT_MODELS
from tests.support.evaluations import AGENTS, run_all, script_votes, start

pytestmark = pytest.mark.django_db(transaction=True)


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


def test_a_runs_judgements_leave_the_users_judgement_limits_alone(fake_llm, suite, user, settings):
    settings.MAGI_RATE_LIMIT_PER_USER = 2
    settings.MAGI_UNFINISHED_PER_USER = 2
    start(suite, user, repeats=2)  # six queued judgements, none finished
    limits.check(user, None)  # would raise Refused if they counted


def test_it_refuses_a_run_over_the_users_unfinished_runs(fake_llm, suite, user, settings):
    settings.MAGI_UNFINISHED_RUNS_PER_USER = 1
    start(suite, user)
    with pytest.raises(Refused, match="1 evaluation runs not finished"):
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
