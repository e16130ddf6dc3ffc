"""The worker's side of a lease: keeping what it holds while the work runs.

The lease itself (its fields, its one expiry formula, claim, renew and release) is
models/leases.py's, the same for judgements, webhook deliveries and reviewers' emails.
A worker renews what it holds every third of a lease while the work runs (`renewing`
for the outcome jobs, `HeldLease.keep` for a judgement); a lease that ran out lets
another worker claim the row and do the work again from what was stored.

A judgement asks more of its lease than the outcome jobs do, because a deliberation
spends money on calls. The worker's own view of it (`HeldLease`) knows when it last made
sure of it: before a round or a call it renews first unless it did within half a lease,
so that a worker whose renewals could not get through (a database outage) sends nothing
on a lease another worker may hold. Every write made while judging checks the lease
again under a row lock (engine/lifecycle.py), so data stays right whatever happens.
"""

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from judgements.core.errors import MagiError
from judgements.infrastructure.database import DATABASE_DOWN, db_call
from judgements.models import Judgement, Status
from judgements.models.leases import renew_every
from judgements.models.magi_settings import magi_settings

T = TypeVar("T")

log = logging.getLogger(__name__)


class LeaseLost(MagiError):
    """Another worker holds the judgement now (or it ended): this one must stop."""


class Lease(StrEnum):
    """What a renewal found."""

    HELD = "held"  # renewed: the work goes on
    ENDED = "ended"  # the judgement finished (most likely by this very worker)
    # Ended in error while this worker held it: its run was cancelled (cancel_run); the
    # worker's own failures end it only after its work stopped.
    CANCELLED = "cancelled"
    TAKEN = "taken"  # another worker holds it now: this one must stop


async def renewing(work: Awaitable[T], renew: Callable[[], Awaitable[object]], what: str) -> T:
    """Await `work`, calling `renew` every third of a lease until it ends: how a worker
    keeps the webhook deliveries and emails it is sending (their sends block a thread
    for seconds). A database that is away only delays a renewal; a row taken over
    meanwhile is safe all the same, as each kind's ending is conditional on its holder."""
    task = asyncio.ensure_future(work)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=renew_every())
            if done:
                return task.result()
            try:
                await renew()
            except DATABASE_DOWN:
                log.warning("could not renew the leases on %s; trying again", what)
    finally:
        task.cancel()  # the worker stopping: nothing is left running unawaited


def renew(judgement_id: int, worker_id: str) -> Lease:
    """Extend the lease while the work goes on, and say whether it is still ours."""
    if Judgement.objects.filter(pk=judgement_id).renew(worker_id):
        return Lease.HELD
    status = Judgement.objects.filter(pk=judgement_id).values_list("status", flat=True).first()
    if status == Status.JUDGING:
        return Lease.TAKEN
    return Lease.CANCELLED if status == Status.ERROR else Lease.ENDED


arenew = db_call(renew)


@dataclass
class HeldLease:
    """The lease `worker_id` holds on `judgement_id`, and when it was last made sure of."""

    judgement_id: int
    worker_id: str
    # Claimed just now: the claim set the lease.
    renewed_at: float = field(default_factory=time.monotonic)

    async def renew(self) -> Lease:
        """Extend the lease through the database (raises while it is unreachable)."""
        lease = await arenew(self.judgement_id, self.worker_id)
        if lease is Lease.HELD:
            self.renewed_at = time.monotonic()
        return lease

    def is_fresh(self) -> bool:
        """Renewed within half a lease: nobody else can have claimed the judgement since."""
        half: float = magi_settings.MAGI_LEASE_SECONDS / 2
        return time.monotonic() - self.renewed_at < half

    async def confirm(self) -> None:
        """Before a round or a call: renew first unless renewed within half a lease;
        LeaseLost if the judgement is not ours any more. A database still away raises its
        error, which the caller's retries ride out like any other."""
        if self.is_fresh():
            return
        lease = await self.renew()
        if lease is not Lease.HELD:
            log.warning(
                "worker %s: judgement %s is %s since the last renewal; sending nothing",
                self.worker_id,
                self.judgement_id,
                lease.value,
            )
            raise LeaseLost(f"judgement {self.judgement_id} is no longer held by {self.worker_id}")

    async def keep(self, work: "asyncio.Future[T]", taken: asyncio.Event) -> None:
        """Renew the lease while `work` runs; stop the work once another worker holds it
        (or its run was cancelled), setting `taken`.

        A database that is away only delays the renewal: if nobody took the judgement in
        the meantime, the renewal that gets through keeps it ours (storing a decision
        checks ownership in any case, and no call goes out on a stale lease: `confirm`).
        """
        while not work.done():
            await asyncio.sleep(renew_every())
            try:
                state = await self.renew()
            except DATABASE_DOWN:
                log.warning(
                    "could not renew the lease on judgement %s; trying again", self.judgement_id
                )
                continue
            if state is Lease.ENDED:
                return  # finished, most likely by the work itself a moment ago
            if state is Lease.CANCELLED:
                if not work.done():
                    log.info("judgement %s was cancelled; stopping its calls", self.judgement_id)
                    taken.set()
                    work.cancel()
                return
            if state is Lease.TAKEN:
                log.warning("lost the lease on judgement %s; stopping", self.judgement_id)
                taken.set()
                work.cancel()
                return
