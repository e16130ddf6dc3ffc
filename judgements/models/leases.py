"""The lease: how one worker holds one piece of background work, in the database.

MAGI runs three kinds of background job, and all three are held the same way: a
judgement (engine/), a webhook delivery (outcome/webhooks.py) and a reviewer's email
(outcome/notifications.py). Their rows carry the lease's two fields (`Leased`) and their
querysets its four moves (`LeaseQuerySet`):

    free row ──claim──▶ held by a worker until now + MAGI_LEASE_SECONDS
                 │  ▲       │
                 │  └renew──┘  (every third of a lease while the work runs)
                 ├──release──▶ free (the work ended; the kind's own status says how)
                 └──expiry───▶ free again: the worker died or was cut off, and the next
                               claim takes the row over (at least once, never lost)

One expiry formula (`expiry`), one test for "nobody holds it" (`lease_expired`), one
claim (SELECT ... FOR UPDATE SKIP LOCKED, then a conditional UPDATE), so a worker sweeping
at the same moment as another takes different rows, and a dead worker's rows come back
after one lease whatever their kind. What the work may do while held stays with each
kind; how its state changes is its graph's, declared beside its model and moved by the
one transition function (models/states.py), a claim's change of state included.
"""

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Self, TypeVar

from django.db import models, transaction
from django.utils import timezone

from judgements.models.magi_settings import magi_settings
from judgements.models.states import Move, StateQuerySet, Told, transition

M = TypeVar("M", bound=models.Model)

# The fields every ending writes beside its status: nobody holds the row any more.
RELEASED: dict[str, str | None] = {"lease_owner": "", "lease_expires_at": None}


def expiry(now: datetime) -> datetime:
    """When a lease taken or renewed at `now` runs out: the one formula for every kind."""
    return now + timedelta(seconds=magi_settings.MAGI_LEASE_SECONDS)


def renew_every() -> float:
    """How often a holder renews: three renewals a lease, so one late renewal (a slow
    database) does not lose it."""
    return float(magi_settings.MAGI_LEASE_SECONDS) / 3


def taken_by(worker_id: str, now: datetime) -> dict[str, str | datetime]:
    """The fields a claim writes: the row is `worker_id`'s until its lease runs out."""
    return {"lease_owner": worker_id, "lease_expires_at": expiry(now)}


def lease_expired(now: datetime) -> models.Q:
    """Nobody holds the row: its worker stopped renewing, released it, or never took it."""
    return models.Q(lease_expires_at__lt=now) | models.Q(lease_expires_at__isnull=True)


class Leased(models.Model):
    """The lease's fields, the same on every kind of background work."""

    # The worker holding it (host:pid:random, engine/runner.new_worker_id); "" when free.
    lease_owner = models.CharField(max_length=100, blank=True)
    # When its lease runs out unless renewed; None when free.
    lease_expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True


class LeaseQuerySet(StateQuerySet[M]):
    """Claim, renew and release, for any kind of background work (each kind has states:
    its state column moves only through `transition`)."""

    def free(self, now: datetime) -> Self:
        return self.filter(lease_expired(now))

    def held_by(self, worker_id: str) -> Self:
        return self.filter(lease_owner=worker_id)

    def claim(
        self,
        worker_id: str,
        limit: int,
        *,
        order: Sequence[str],
        columns: Sequence[str] = ("pk",),
        now: datetime | None = None,
        move: Move | None = None,
        told: Callable[[tuple[Any, ...]], Told] | None = None,
        **changes: object,
    ) -> list[tuple[Any, ...]]:
        """Take up to `limit` free rows of this queryset, first by `order`, for
        `worker_id`, writing `changes` beside the lease. Returns each row's `columns`
        (the first must be "pk") as they were before the claim. With a `move` (its one
        target), the claim changes the rows' state too, through the one transition
        function, each row logged as `told` says.

        PostgreSQL: FOR UPDATE SKIP LOCKED, so concurrent claims take different rows
        instead of queueing; the UPDATE then re-checks the same conditions. SQLite ignores
        FOR UPDATE, but its IMMEDIATE transactions take the write lock at BEGIN. Inside a
        caller's transaction no savepoint is made: the rows stay locked until it commits.
        """
        if limit <= 0:
            return []
        now = now or timezone.now()
        with transaction.atomic(savepoint=False):
            rows = list(
                self.free(now)
                .select_for_update(skip_locked=True)
                .order_by(*order)
                .values_list(*columns)[:limit]
            )
            if not rows:
                return []
            taken = self.free(now).filter(pk__in=[row[0] for row in rows])
            if move is None:
                updated = taken.update(**taken_by(worker_id, now), **changes)
            else:
                (target,) = move.targets
                said = [told(row) for row in rows] if told else []
                updated = transition(
                    taken, move, target, worker=worker_id, told=said,
                    **taken_by(worker_id, now), **changes,
                )  # fmt: skip
            if updated != len(rows):  # pragma: no cover - the locks above make this impossible
                raise transaction.TransactionManagementError("claimed rows changed under a lock")
        return rows

    def renew(self, worker_id: str, now: datetime | None = None) -> int:
        """Extend `worker_id`'s leases on these rows; how many it still held."""
        now = now or timezone.now()
        return self.held_by(worker_id).update(lease_expires_at=expiry(now))

    def release(self, worker_id: str, **changes: object) -> int:
        """Give up `worker_id`'s leases on these rows, writing `changes` with it; how
        many it still held (a worker that lost a row to another changes nothing)."""
        return self.held_by(worker_id).update(**RELEASED, **changes)
