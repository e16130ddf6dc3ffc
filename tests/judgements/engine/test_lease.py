"""A worker's lease as it knows it (HeldLease, judgements/engine/lease.py): after
renewals could not get through (a database outage), nothing is asked on a lease another
worker may hold."""

import asyncio
import time
from datetime import datetime

import pytest
from asgiref.sync import sync_to_async
from django.db import OperationalError

from judgements.engine import lease
from judgements.engine.deliberation import deliberate, load
from judgements.engine.lease import HeldLease, Lease, LeaseLost
from judgements.llm import calls
from judgements.models import Judgement, Status
from tests.support.leases import set_lease

pytestmark = pytest.mark.django_db(transaction=True)


def stale(lease: HeldLease, seconds: float) -> HeldLease:
    """As if the last renewal that got through was `seconds` ago."""
    lease.renewed_at = time.monotonic() - seconds
    return lease


async def test_a_stale_lease_another_worker_took_sends_no_call(fake_llm, make_judgement):
    judgement = await sync_to_async(make_judgement)()
    await set_lease(judgement.pk, "w1", expires_in=30)
    lease = stale(HeldLease(judgement.pk, "w1"), 20)
    # While w1's renewals could not reach the database, its lease ran out and w2 took it.
    await set_lease(judgement.pk, "w2", expires_in=30)
    deliberation = await load(judgement.pk)
    with pytest.raises(LeaseLost):
        await deliberate(deliberation, lease, calls.Clients())
    assert fake_llm.requests == []
    assert (await Judgement.objects.aget(pk=judgement.pk)).lease_owner == "w2"


async def test_a_stale_lease_still_held_is_renewed_and_the_work_goes_on(
    fake_llm, make_judgement, settings
):
    settings.MAGI_LEASE_SECONDS = 30
    judgement = await sync_to_async(make_judgement)()
    await set_lease(judgement.pk, "w1", expires_in=1)
    lease = stale(HeldLease(judgement.pk, "w1"), 20)
    deliberation = await load(judgement.pk)
    assert await deliberate(deliberation, lease, calls.Clients()) == Status.APPROVED
    assert lease.is_fresh()
    assert len(fake_llm.requests) == 9


async def test_a_fresh_lease_is_not_checked_again(fake_llm, make_judgement, settings):
    """Within half a lease of a renewal nobody else can hold the judgement: no query."""
    settings.MAGI_LEASE_SECONDS = 30
    judgement = await sync_to_async(make_judgement)()
    lease = HeldLease(judgement.pk, "w1")
    # Not in the database as w1's at all: only a renewal would find out.
    await set_lease(judgement.pk, "w2", expires_in=30)
    await lease.confirm()


@sync_to_async
def renewed(judgement_id: int, worker_id: str) -> tuple[Lease, datetime | None]:
    found = lease.renew(judgement_id, worker_id)
    return found, Judgement.objects.get(pk=judgement_id).lease_expires_at


async def test_only_the_holder_renews_the_lease(make_judgement):
    judgement = await sync_to_async(make_judgement)()
    await set_lease(judgement.pk, "w1", expires_in=1)
    before = (await Judgement.objects.aget(pk=judgement.pk)).lease_expires_at
    state, expires = await renewed(judgement.pk, "w1")
    assert state is Lease.HELD and expires is not None and before is not None
    assert expires > before
    assert (await renewed(judgement.pk, "w2"))[0] is Lease.TAKEN


async def test_renewing_renews_every_third_of_a_lease_until_the_work_ends(settings):
    """How a worker keeps the webhook deliveries and emails it is sending: the work is
    a future the test ends once it has seen two renewals."""
    settings.MAGI_LEASE_SECONDS = 0.03
    work: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    renewals = 0

    async def renew() -> int:
        nonlocal renewals
        renewals += 1
        if renewals == 2:
            work.set_result("sent")
        return 1

    async with asyncio.timeout(10):  # a guard: without renewals the work never ends
        assert await lease.renewing(work, renew, "test jobs") == "sent"
    assert renewals == 2


async def test_renewing_rides_out_a_database_that_is_away(settings, caplog):
    settings.MAGI_LEASE_SECONDS = 0.03
    work: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    tries = 0

    async def renew() -> int:
        nonlocal tries
        tries += 1
        if tries == 1:
            raise OperationalError("the database is away")
        work.set_result(None)
        return 1

    async with asyncio.timeout(10):  # a guard: without renewals the work never ends
        await lease.renewing(work, renew, "test jobs")
    assert tries == 2
    assert "could not renew the leases on test jobs" in caplog.text
