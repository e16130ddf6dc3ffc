"""The engine in one process: an `EngineRunner` runs judgements within its capacity.

It claims a judgement (a lease in the database: models/leases.py), keeps the lease renewed
while the deliberation runs, ends the judgement in error when a call fails for good or
its time is up, and sweeps the database for work nobody woke it for (queued judgements
whose wake-up was lost, judgements whose worker died). All of its state lives on the
instance; tests drive it one step at a time with `run_single_cycle()` and
`run_judgement()`.
"""

import asyncio
import logging
import os
import socket
import uuid
from functools import partial

from channels.layers import get_channel_layer
from django.utils import timezone

from judgements.engine import lifecycle
from judgements.engine.deliberation import AgentFailure, deliberate, load
from judgements.engine.lease import HeldLease, LeaseLost, renewing
from judgements.infrastructure.database import DATABASE_DOWN, db_call
from judgements.llm import calls
from judgements.llm.call_slots import batch_share
from judgements.models.judgements import Judgement
from judgements.models.magi_settings import magi_settings
from judgements.outcome import checkpoints, notifications, slack_outbox, webhooks

log = logging.getLogger(__name__)

anotify = db_call(notifications.deliver)
asequence = db_call(checkpoints.sequence_and_publish)
arenew_deliveries = db_call(webhooks.renew_held)
arenew_notifications = db_call(notifications.renew_held)
aslack = db_call(slack_outbox.deliver)
arenew_slack = db_call(slack_outbox.renew_held)


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class EngineRunner:
    def __init__(self, worker_id: str | None = None, concurrency: int | None = None) -> None:
        self.worker_id = worker_id or new_worker_id()
        self.concurrency = concurrency or magi_settings.MAGI_WORKER_CONCURRENCY
        # HTTP pools and per-model call slots belong to one event loop: this runner's.
        self.clients = calls.Clients()
        self.running: dict[int, asyncio.Task[bool]] = {}
        # Of those, the evaluation runs' judgements: they fill at most
        # call_slots.batch_share(concurrency), so a person's judgement always finds room.
        self.batch: set[int] = set()
        # Set when a judgement ends here, so the sweeper looks for waiting work at once.
        self.capacity_freed = asyncio.Event()
        # Set when a judgement ends here: its webhook (if any) is due now.
        self.webhooks_due = asyncio.Event()
        # Judgements a sweep claimed while a wake-up's task here was still claiming them:
        # that task's own claim then fails, and it runs them on the sweep's claim instead
        # of leaving them held by nobody until the lease runs out (start, run_judgement).
        self.swept_meanwhile: set[int] = set()

    def __str__(self) -> str:
        return f"engine worker {self.worker_id}"

    # --- one judgement --------------------------------------------------------------

    async def run_judgement(self, judgement_id: int, *, claimed: bool = False) -> bool:
        """Run (or resume) one judgement to its end. False if someone else holds it.

        `claimed` says this runner already holds the lease (the sweeper claims in batches).
        """
        if not claimed:
            candidates = Judgement.objects.filter(pk=judgement_id)
            claimed = bool(await lifecycle.aclaim(self.worker_id, candidates, 1))
            if not claimed and judgement_id not in self.swept_meanwhile:
                return False
        self.swept_meanwhile.discard(judgement_id)
        deliberation = await load(judgement_id)
        # The deadline counts from the first claim, across resumes.
        started = deliberation.judgement.started_at or timezone.now()
        remaining = (
            magi_settings.MAGI_JUDGEMENT_TIMEOUT - (timezone.now() - started).total_seconds()
        )
        lease = HeldLease(judgement_id, self.worker_id)
        work = asyncio.create_task(deliberate(deliberation, lease, self.clients))
        taken = asyncio.Event()
        renewer = asyncio.create_task(lease.keep(work, taken))
        try:
            async with asyncio.timeout(max(remaining, 0.0)):
                await work
        except AgentFailure as failure:
            await self.end_in_error(
                judgement_id,
                str(failure),
                agent_id=failure.agent_id,
                round_number=failure.round_number,
            )
        except TimeoutError:
            round_number = deliberation.round_under_way()
            await self.end_in_error(
                judgement_id, lifecycle.timeout_message(round_number), round_number=round_number
            )
        except LeaseLost:
            log.warning("judgement %s was taken over by another worker", judgement_id)
        except DATABASE_DOWN:
            # The database stayed away longer than we wait for it. The lease will expire
            # and a worker resumes the judgement from what was stored.
            log.exception("database unavailable while judging %s", judgement_id)
            raise
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not taken.is_set() or (current is not None and current.cancelling()):
                raise
            log.warning("judgement %s was taken over or cancelled; stopped", judgement_id)
        except Exception as exc:
            log.exception("judgement %s failed unexpectedly", judgement_id)
            await self.end_in_error(judgement_id, f"Internal error: {type(exc).__name__}: {exc}")
        finally:
            renewer.cancel()
            if not work.done():
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
        return True

    async def end_in_error(
        self,
        judgement_id: int,
        message: str,
        *,
        agent_id: int | None = None,
        round_number: int | None = None,
    ) -> None:
        """Fail the judgement if this worker still holds it (lifecycle.fail announces it)."""
        await lifecycle.afail(
            judgement_id,
            message,
            worker_id=self.worker_id,
            agent_id=agent_id,
            round_number=round_number,
        )

    # --- scheduling -----------------------------------------------------------------

    def free_capacity(self) -> int:
        busy = sum(1 for task in self.running.values() if not task.done())
        return max(self.concurrency - busy, 0)

    def free_batch_capacity(self) -> int:
        busy = sum(1 for pk in self.batch if pk in self.running and not self.running[pk].done())
        return min(max(batch_share(self.concurrency) - busy, 0), self.free_capacity())

    def start(
        self, judgement_id: int, *, claimed: bool = False, batch: bool = False
    ) -> asyncio.Task[bool] | None:
        """Run a judgement in the background, once, within capacity. None if it already
        runs here or there is no room (it waits in the database for the sweeper)."""
        task = self.running.get(judgement_id)
        if task is not None and not task.done():
            if claimed:
                self.swept_meanwhile.add(judgement_id)
            return None
        if not claimed and not self.free_capacity():
            return None
        task = asyncio.create_task(
            self.run_judgement(judgement_id, claimed=claimed), name=f"judgement-{judgement_id}"
        )
        self.running[judgement_id] = task
        if batch:
            self.batch.add(judgement_id)
        task.add_done_callback(lambda done: self._finished(judgement_id, done))
        return task

    def _finished(self, judgement_id: int, task: asyncio.Task[bool]) -> None:
        if self.running.get(judgement_id) is task:
            del self.running[judgement_id]
            self.batch.discard(judgement_id)
            self.swept_meanwhile.discard(judgement_id)
        if not task.cancelled() and task.exception() is not None:
            log.error(
                "judgement %s stopped: %r; a worker resumes it once its lease expires",
                judgement_id,
                task.exception(),
            )
        # A slot is free: let the sweeper look for waiting work now, not at its next tick.
        self.capacity_freed.set()
        self.webhooks_due.set()

    async def run_single_cycle(self) -> list[int]:
        """One sweep: end in error the judgements whose time is up, then claim and start
        as many waiting ones as there is room for, people's first and evaluation runs'
        within their share (judgements/llm/call_slots.py). Returns the ids started."""
        for judgement_id, message in await lifecycle.aexpire_overdue(self.worker_id):
            log.warning("judgement %s: %s", judgement_id, message)
        interactive = Judgement.objects.filter(evaluation_run__isnull=True)
        started = [
            judgement_id
            for judgement_id in await lifecycle.aclaim(
                self.worker_id, interactive, self.free_capacity()
            )
            if self.start(judgement_id, claimed=True) is not None
        ]
        runs = Judgement.objects.filter(evaluation_run__isnull=False)
        return started + [
            judgement_id
            for judgement_id in await lifecycle.aclaim(
                self.worker_id, runs, self.free_batch_capacity()
            )
            if self.start(judgement_id, claimed=True, batch=True) is not None
        ]

    async def sweep_forever(self) -> None:
        while True:
            self.capacity_freed.clear()
            try:
                await self.run_single_cycle()
            except Exception:
                log.exception("sweep failed; trying again later")
            try:
                async with asyncio.timeout(magi_settings.MAGI_SWEEP_INTERVAL):
                    await self.capacity_freed.wait()
            except TimeoutError:
                pass

    async def deliver_webhooks_forever(self, batch: int = 20) -> None:
        """Send due webhooks (judgements/outcome/webhooks.py); every worker does, so a dead
        worker's deliveries are taken over once their lease expires."""
        while True:
            self.webhooks_due.clear()
            try:
                sending = webhooks.adeliver_due(self.worker_id, batch)
                renew = partial(arenew_deliveries, self.worker_id)
                if await renewing(sending, renew, "webhook deliveries") >= batch:
                    continue  # more may be waiting
            except Exception:
                log.exception("webhook delivery failed; trying again later")
            try:
                async with asyncio.timeout(magi_settings.MAGI_SWEEP_INTERVAL):
                    await self.webhooks_due.wait()
            except TimeoutError:
                pass

    async def deliver_notifications_forever(self) -> None:
        """Tell reviewers what waits for them at each sweep, by email
        (judgements/outcome/notifications.py) and in Slack (outcome/slack_outbox.py);
        every worker does, each taking rows the others have not locked."""
        tellers = (
            (anotify, arenew_notifications, "reviewers' emails"),
            (aslack, arenew_slack, "Slack messages"),
        )
        while True:
            for tell, renew_held, what in tellers:
                try:
                    await renewing(tell(self.worker_id), partial(renew_held, self.worker_id), what)
                except Exception:
                    log.exception("%s failed; trying again later", what)
            await asyncio.sleep(magi_settings.MAGI_SWEEP_INTERVAL)

    async def sequence_forever(self) -> None:
        """Place the audit log's queued entries and sign their checkpoint, publishing it
        (outcome/checkpoints.py); every worker tries, the one holding the sequencer's
        lease does it."""
        while True:
            try:
                if await asequence(self.worker_id):
                    self.webhooks_due.set()  # a checkpoint's events may be due
            except Exception:
                log.exception("audit log sequencing failed; trying again later")
            await asyncio.sleep(magi_settings.MAGI_AUDIT_LOG_INTERVAL)

    async def listen_forever(self) -> None:
        """Start judgements as their wake-ups arrive on the engine's channel."""
        layer = get_channel_layer()
        while True:
            try:
                message = await layer.receive(magi_settings.MAGI_ENGINE_CHANNEL)
            except asyncio.CancelledError:
                raise
            except Exception:
                # A channel layer that drops out (Redis restarting) must not end the
                # worker: the database still holds the work, and the sweeper finds it.
                log.exception("channel layer receive failed; retrying in a second")
                await asyncio.sleep(1.0)
                continue
            if message.get("judgement_id") is None:
                self.capacity_freed.set()  # an evaluation run's: claimed by the sweep
            else:
                self.start(int(message["judgement_id"]))

    async def run_forever(self) -> None:
        log.info("%s listening on %s", self, magi_settings.MAGI_ENGINE_CHANNEL)
        async with asyncio.TaskGroup() as group:
            group.create_task(self.sweep_forever())
            group.create_task(self.listen_forever())
            group.create_task(self.deliver_webhooks_forever())
            group.create_task(self.deliver_notifications_forever())
            group.create_task(self.sequence_forever())
