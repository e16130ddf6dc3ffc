"""A judgement's events: how its state changes reach whoever follows it, and how new
work wakes the engine. Below the engine and every area that starts, runs or reviews a
judgement, so each of them publishes the same way.

The engine publishes a small event to the judgement's channel-layer group on every state
change (the live page re-renders from the database on each one; a transition's once its
transaction commits), a review publishes one once it commits, and a judgement or a run
queued wakes a worker. Anyone waiting for a judgement (the API's `?wait`, the command
line, the MCP tools) follows the same group. The database holds the truth: a channel
layer that is slow or away (Redis restarting) costs a bounded wait and is then skipped,
and followers fall back to reading the database.
"""

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Coroutine
from enum import StrEnum
from typing import Never

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, get_channel_layer
from django.db import transaction

from judgements.infrastructure.database import db_call
from judgements.models import FINISHED_STATUSES, Judgement
from judgements.models.magi_settings import magi_settings

log = logging.getLogger(__name__)


def group_name_for(judgement_id: int) -> str:
    """The channel-layer group of one judgement's followers."""
    return f"judgement-{judgement_id}"


class Event(StrEnum):
    """Kinds of state change. The page re-renders from the database on each one."""

    JUDGING_STARTED = "judging_started"
    AGENTS_THINKING = "agents_thinking"
    DECISION_STORED = "decision_stored"
    ROUND_DONE = "round_done"
    FINISHED = "finished"
    FAILED = "failed"
    REVIEWED = "reviewed"  # a person confirmed or overrode the verdict


# After a failed send the layer is skipped for a moment, so a Redis that is away costs a
# judgement one bounded wait, not one per event. The moment is kept on the layer itself
# (the process's one connection to it), not in this module.
LAYER_BACKOFF_SECONDS = 1.0
DOWN_UNTIL = "magi_down_until"


async def send_to_layer(
    layer: BaseChannelLayer, send: Coroutine[object, Never, object], what: str
) -> bool:
    """Await a call `send` on `layer`, bounded in time; log and swallow its failure."""
    if time.monotonic() < getattr(layer, DOWN_UNTIL, 0.0):
        send.close()
        log.info("channel layer unavailable: skipped %s", what)
        return False
    try:
        async with asyncio.timeout(magi_settings.MAGI_CHANNEL_SEND_TIMEOUT):
            await send
        return True
    except Exception:
        setattr(layer, DOWN_UNTIL, time.monotonic() + LAYER_BACKOFF_SECONDS)
        log.warning("channel layer: could not %s", what, exc_info=log.isEnabledFor(logging.DEBUG))
        return False


async def publish(judgement_id: int, kind: Event, **data: object) -> None:
    """Tell the judgement's group that its state changed."""
    layer = get_channel_layer()
    if layer is None:
        return
    event = {"type": "judgement.event", "kind": kind, "judgement_id": judgement_id, **data}
    await send_to_layer(
        layer,
        layer.group_send(group_name_for(judgement_id), event),
        f"publish {kind} for judgement {judgement_id}",
    )


def publish_on_commit(judgement_id: int, kind: Event, **data: object) -> None:
    """From synchronous code, inside the transaction that made the change: publish once
    it commits (a change rolled back is never announced; outside a transaction, at once).
    The transitions (engine/lifecycle.py) and the reviews announce themselves this way."""
    transaction.on_commit(lambda: async_to_sync(publish)(judgement_id, kind, **data))


def announce_review(judgement_id: int) -> None:
    """Once the review's transaction commits: open live pages show the verdict now in
    force at once, not at their next resync."""
    publish_on_commit(judgement_id, Event.REVIEWED)


async def wake(judgement_id: int | None = None) -> None:
    """Tell a worker there is work: a person's judgement to start, or (None) an
    evaluation run's judgements to claim within their share. Losing this message loses
    nothing: workers sweep the database for queued judgements."""
    layer = get_channel_layer()
    if layer is None:
        return
    await send_to_layer(
        layer,
        layer.send(
            magi_settings.MAGI_ENGINE_CHANNEL,
            {"type": "judgement.run", "judgement_id": judgement_id},
        ),
        f"wake a worker for judgement {judgement_id or 'of an evaluation run'}",
    )


# Even when every event arrives, look at the database now and then: an event can be lost
# (Redis restarting) and the database is what counts.
RECHECK_SECONDS = 5.0


def status_of(judgement_id: int) -> str | None:
    """Its status; for a level that escalated, its story's last level's (docs/escalation.md):
    the story has ended only when that one has."""
    row = (
        Judgement.objects.filter(pk=judgement_id)
        .values_list("status", "escalated", "root_id")
        .first()
    )
    if row is None or not row[1]:
        return None if row is None else row[0]
    last = (
        Judgement.objects.filter(root_id=row[2] or judgement_id)
        .order_by("-level")
        .values_list("status", "escalated")
        .first()
    )
    # Escalated with no level after it yet: not ended.
    return "judging" if last is None or last[1] else last[0]


async def is_finished(judgement_id: int) -> bool:
    # As a request's call: every `?wait` polls it, and a read must not queue behind writes.
    status = await db_call(status_of, for_request=True)(judgement_id)
    return status is None or status in FINISHED_STATUSES


async def changes(
    judgement_id: int, seconds: float, *, recheck: float = RECHECK_SECONDS
) -> AsyncIterator[bool]:
    """Yield each time the judgement may have changed (an event arrived, or `recheck`
    seconds passed), with whether it has finished; stop once it has or `seconds` are up.

    The first yield is immediate. Without a channel layer (Redis away) this reads the
    database every `recheck` seconds instead of waiting for events.
    """
    deadline = time.monotonic() + seconds
    layer = get_channel_layer()
    group = group_name_for(judgement_id)
    channel = None
    if layer is not None:
        candidate = await layer.new_channel()
        if await send_to_layer(layer, layer.group_add(group, candidate), f"follow {group}"):
            channel = candidate
    try:
        while True:
            finished = await is_finished(judgement_id)
            yield finished
            remaining = deadline - time.monotonic()
            if finished or remaining <= 0:
                return
            pause = min(remaining, recheck)
            if channel is None:
                await asyncio.sleep(pause)
                continue
            try:
                async with asyncio.timeout(pause):
                    await layer.receive(channel)
            except TimeoutError:
                pass
            except Exception:
                log.warning("channel layer: lost %s; reading the database instead", group)
                channel = None
    finally:
        if channel is not None:
            await send_to_layer(
                layer, layer.group_discard(group, channel), f"stop following {group}"
            )


async def wait_until_finished(judgement_id: int, seconds: float) -> None:
    """Return once the judgement has ended or `seconds` are up, whichever comes first."""
    if seconds <= 0:
        return
    async for _ in changes(judgement_id, seconds):
        pass
