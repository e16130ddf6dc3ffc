"""A worker's lease as it knows it (HeldLease, judgements/engine/deliberation.py): after
renewals could not get through (a database outage), nothing is asked on a lease another
worker may hold."""

import time

import pytest
from asgiref.sync import sync_to_async

from judgements.engine.deliberation import HeldLease, deliberate, load
from judgements.engine.lifecycle import LeaseLost
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
