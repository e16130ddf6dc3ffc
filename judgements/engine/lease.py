"""A worker's lease on the judgement it runs, as the worker knows it.

Storing a decision checks that the worker still holds the judgement, so data stays right
whatever happens; this keeps the calls right too. A worker whose renewals could not reach
the database (an outage) may have lost the judgement to another worker without knowing:
before it starts a round or sends a call it makes sure it renewed within half a lease,
renewing first if not, so two workers never ask the same round.
"""

import logging
import time

from django.conf import settings

from judgements.core.errors import MagiError
from judgements.engine import transitions
from judgements.engine.transitions import Lease

log = logging.getLogger(__name__)


class LeaseLost(MagiError):
    """Another worker holds the judgement now (or it ended): this one must stop."""


class HeldLease:
    """The lease `worker_id` holds on `judgement_id`, and when it was last made sure of."""

    def __init__(self, judgement_id: int, worker_id: str) -> None:
        self.judgement_id = judgement_id
        self.worker_id = worker_id
        # Claimed just now: the claim set the lease.
        self.renewed_at = time.monotonic()

    async def renew(self) -> Lease:
        """Extend the lease through the database (raises while it is unreachable)."""
        lease = await transitions.arenew_lease(self.judgement_id, self.worker_id)
        if lease is Lease.HELD:
            self.renewed_at = time.monotonic()
        return lease

    def is_fresh(self) -> bool:
        """Renewed within half a lease: nobody else can have claimed the judgement since."""
        return time.monotonic() - self.renewed_at < settings.MAGI_LEASE_SECONDS / 2

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
