"""The engine runner on the fast (SQLite) path: sweeping, capacity, expiry, claim races
and a lease taken away mid-judgement. Each lease guard has a test here that fails when
the guard is removed."""

import asyncio
import logging

import pytest
from asgiref.sync import sync_to_async

from judgements.engine import lifecycle
from judgements.engine.lease import HeldLease
from judgements.engine.runner import EngineRunner
from judgements.models import Judgement, RoundDecision, Status
from tests.support.leases import set_lease

pytestmark = pytest.mark.django_db(transaction=True)


@sync_to_async
def load(judgement_id: int) -> Judgement:
    return Judgement.objects.get(pk=judgement_id)


async def parked(fake_llm, *calls: tuple[str, int]) -> None:
    await asyncio.to_thread(fake_llm.gate.wait_parked, *calls)


ROUND_ONE = (("model-a", 1), ("model-b", 1), ("model-c", 1))


async def test_a_sweep_runs_queued_judgements_within_capacity(fake_llm, make_judgement):
    runner = EngineRunner(worker_id="sweeper", concurrency=2)
    judgements = [await sync_to_async(make_judgement)() for _ in range(3)]
    fake_llm.gate.close()
    started = await runner.run_single_cycle()
    assert started == [judgements[0].pk, judgements[1].pk]
    assert runner.free_capacity() == 0
    assert (await load(judgements[2].pk)).status == Status.IDLE
    fake_llm.gate.open()
    await asyncio.gather(*runner.running.values())
    assert (await load(judgements[0].pk)).status == Status.APPROVED
    # The freed capacity takes the one left waiting.
    assert await runner.run_single_cycle() == [judgements[2].pk]
    await asyncio.gather(*runner.running.values())
    assert (await load(judgements[2].pk)).status == Status.APPROVED


async def test_a_judgement_runs_once_per_process(fake_llm, make_judgement):
    runner = EngineRunner(worker_id="w1", concurrency=1)
    first, second = [await sync_to_async(make_judgement)() for _ in range(2)]
    fake_llm.gate.close()
    task = runner.start(first.pk)
    assert task is not None
    assert runner.start(first.pk) is None  # already running here
    assert runner.start(second.pk) is None  # no room: it waits in the database
    fake_llm.gate.open()
    assert await task


async def test_a_judgement_a_sweep_claims_under_a_wake_ups_task_still_runs(
    fake_llm, make_judgement, runner
):
    # A wake-up started a task here; before that task's claim reached the database, this
    # worker's sweep claimed the judgement and found the task already running it. The
    # task's own claim then fails: it must run the judgement on the sweep's claim, not
    # leave it held by this worker and run by nobody until the lease runs out.
    judgement = await sync_to_async(make_judgement)()
    sweep = Judgement.objects.filter(pk=judgement.pk)
    assert await lifecycle.aclaim(runner.worker_id, sweep, 1) == [judgement.pk]
    woken = runner.start(judgement.pk)
    assert woken is not None
    assert runner.start(judgement.pk, claimed=True) is None  # the sweep's, after its claim
    assert await woken
    assert (await load(judgement.pk)).status == Status.APPROVED
    assert not runner.swept_meanwhile


async def test_a_sweep_resumes_a_dead_workers_judgement(fake_llm, make_judgement, runner):
    judgement = await sync_to_async(make_judgement)()
    agent = await judgement.agents.afirst()
    await RoundDecision.objects.acreate(agent=agent, round=1, decision="approve", reason="r")
    await set_lease(judgement.pk, "dead-worker", expires_in=-1)
    assert await runner.run_single_cycle() == [judgement.pk]
    await asyncio.gather(*runner.running.values())
    assert (await load(judgement.pk)).status == Status.APPROVED
    assert not fake_llm.requests_for("model-a", 1)  # decided before: not asked again


async def test_a_sweep_leaves_a_live_lease_alone(fake_llm, make_judgement, runner):
    judgement = await sync_to_async(make_judgement)()
    await set_lease(judgement.pk, "busy-worker", expires_in=30)
    assert await runner.run_single_cycle() == []
    assert not await runner.run_judgement(judgement.pk)
    assert (await load(judgement.pk)).lease_owner == "busy-worker"
    assert not fake_llm.requests


async def test_a_sweep_ends_overdue_judgements_in_error(fake_llm, make_judgement, runner, settings):
    settings.MAGI_JUDGEMENT_TIMEOUT = 60
    judgement = await sync_to_async(make_judgement)()
    await set_lease(judgement.pk, "dead-worker", expires_in=-1, started_ago=120)
    assert await runner.run_single_cycle() == []
    ended = await load(judgement.pk)
    assert ended.status == Status.ERROR
    assert ended.error_message.endswith("worker dead-worker stopped renewing its lease")
    assert not fake_llm.requests


async def test_two_runners_racing_run_each_call_once(fake_llm, make_judgement):
    one, two = EngineRunner(worker_id="one"), EngineRunner(worker_id="two")
    judgements = [await sync_to_async(make_judgement)() for _ in range(4)]
    results = await asyncio.gather(
        *(runner.run_judgement(j.pk) for j in judgements for runner in (one, two))
    )
    assert sorted(results) == [False] * 4 + [True] * 4
    for judgement in judgements:
        assert (await load(judgement.pk)).status == Status.APPROVED
    assert len(fake_llm.requests) == 9 * len(judgements)


async def test_a_worker_that_lost_its_lease_stores_nothing(fake_llm, make_judgement, runner):
    judgement = await sync_to_async(make_judgement)()
    fake_llm.gate.close()
    run = asyncio.create_task(runner.run_judgement(judgement.pk))
    await parked(fake_llm, *ROUND_ONE)
    # Another worker took the judgement over while round 1 was in flight.
    await set_lease(judgement.pk, "thief", expires_in=30)
    fake_llm.gate.open()
    assert await run
    assert not await RoundDecision.objects.filter(agent__judgement=judgement).aexists()
    taken = await load(judgement.pk)
    assert (taken.status, taken.lease_owner) == (Status.JUDGING, "thief")


async def test_a_worker_stops_its_calls_once_its_lease_is_taken(
    fake_llm, make_judgement, runner, settings, caplog
):
    settings.MAGI_LEASE_SECONDS = 0.3  # renewed every 0.1 s
    judgement = await sync_to_async(make_judgement)()
    fake_llm.gate.close()
    run = asyncio.create_task(runner.run_judgement(judgement.pk))
    await parked(fake_llm, *ROUND_ONE)
    await set_lease(judgement.pk, "thief", expires_in=30)
    with caplog.at_level(logging.WARNING, logger="judgements.engine.lease"):
        # The calls are still held at the gate: only the renewal can stop the work.
        async with asyncio.timeout(10):
            assert await run
    assert f"lost the lease on judgement {judgement.pk}; stopping" in caplog.text
    assert (await load(judgement.pk)).lease_owner == "thief"


async def test_a_finished_judgement_is_not_reported_as_a_lost_lease(
    fake_llm, make_judgement, runner, settings, caplog
):
    settings.MAGI_LEASE_SECONDS = 0.3
    judgement = await sync_to_async(make_judgement)()
    assert await runner.run_judgement(judgement.pk)
    never_done = asyncio.get_running_loop().create_future()
    taken = asyncio.Event()
    # The renewal wakes after the judgement ended, before its work task is marked done.
    with caplog.at_level(logging.WARNING, logger="judgements.engine.lease"):
        await HeldLease(judgement.pk, runner.worker_id).keep(never_done, taken)
    assert not taken.is_set() and not never_done.cancelled()
    assert "lost the lease" not in caplog.text
    never_done.cancel()


async def test_it_ends_in_error_when_time_is_up(fake_llm, make_judgement, runner, settings):
    settings.MAGI_JUDGEMENT_TIMEOUT = 0.5
    judgement = await sync_to_async(make_judgement)()
    fake_llm.gate.close()
    for model, _ in ROUND_ONE:
        fake_llm.gate.allow(model, 1)
    assert await runner.run_judgement(judgement.pk)  # round 2 never answers
    ended = await load(judgement.pk)
    assert ended.status == Status.ERROR
    assert ended.error_message == (
        "Judgement did not finish within 0.5 s of its start (given up in round 2)"
    )
    assert ended.error_round == 2


async def test_it_will_not_rerun_a_finished_judgement(fake_llm, make_judgement, runner):
    judgement = await sync_to_async(make_judgement)()
    assert await runner.run_judgement(judgement.pk)
    fake_llm.requests.clear()
    assert not await runner.run_judgement(judgement.pk)
    assert not fake_llm.requests
