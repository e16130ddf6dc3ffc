"""The engine's worker: a Channels background consumer plus a sweeper.

The same code runs inside the web process on the embedded default and under
`manage.py runworker magi-engine` when Redis carries the channel layer.
"""

import asyncio
import logging

from channels.consumer import AsyncConsumer
from channels.worker import Worker
from django.conf import settings

from judgements import engine

log = logging.getLogger(__name__)

# One worker identity per process: leases name the process that holds them.
WORKER_ID = engine.new_worker_id()


class EngineConsumer(AsyncConsumer):
    """Wakes on `judgement.run` messages; the database says what to run."""

    async def judgement_run(self, message: dict) -> None:
        # Handlers of one consumer run one after another, so the judgement runs in its
        # own task and the next wake-up is read at once.
        engine.start(int(message["judgement_id"]), WORKER_ID)


class EngineWorker(Worker):
    """A Channels worker that also sweeps for work nobody woke it up for."""

    async def handle(self) -> None:
        sweeper = None
        if settings.MAGI_ENGINE_CHANNEL in self.channels:
            # On start and then periodically: queued judgements nobody was woken for, and
            # judgements whose worker died (its lease expired), resumed from the database.
            sweeper = asyncio.create_task(engine.sweep_forever(WORKER_ID))
        log.info("engine worker %s listening on %s", WORKER_ID, ", ".join(self.channels))
        try:
            await super().handle()
        finally:
            if sweeper is not None:
                sweeper.cancel()

    async def listener(self, channel: str) -> None:
        # A channel layer that drops out (Redis restarting) must not end the worker: the
        # database still holds the work, and the sweeper finds it once we are back.
        while True:
            try:
                await super().listener(channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("channel layer receive failed on %s; retrying", channel)
                await asyncio.sleep(1.0)


_in_process: asyncio.Task | None = None


def ensure_in_process_worker(application, channel_layer) -> None:
    """Start the engine worker inside this (web) process, once per event loop."""
    global _in_process
    if _in_process is not None and not _in_process.done():
        return
    worker = EngineWorker(
        application=application,
        channels=[settings.MAGI_ENGINE_CHANNEL],
        channel_layer=channel_layer,
    )
    _in_process = asyncio.get_running_loop().create_task(worker.arun())
    log.info("engine worker %s running inside the web process", WORKER_ID)
