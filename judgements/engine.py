"""The deliberation: three rounds, three concurrent calls a round, each decision stored
the moment it arrives, every state change published as a small event.

The database is the source of truth. A worker claims a judgement with a lease it keeps
renewing; whoever resumes a judgement (after a crash, a lost lease, a restart) starts
from the stored decisions, so a decided (agent, round) is never asked again.
"""

import asyncio
import functools
import logging
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import timedelta

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, connections, transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone
from tenacity import (
    AsyncRetrying,
    retry_if_exception_type,
    stop_after_delay,
    wait_exponential_jitter,
)

from judgements import llm, prompts, rules
from judgements.errors import MagiError
from judgements.models import (
    Agent,
    AttemptOutcome,
    Judgement,
    LLMAttempt,
    RoundDecision,
    Status,
    group_name_for,
)

log = logging.getLogger(__name__)

EventListener = Callable[[dict], Awaitable[None]]


class Event:
    """Kinds of state change. The page re-renders from the database on each one."""

    JUDGING_STARTED = "judging_started"
    AGENTS_THINKING = "agents_thinking"
    DECISION_STORED = "decision_stored"
    ROUND_DONE = "round_done"
    FINISHED = "finished"
    FAILED = "failed"


class AgentFailure(MagiError):
    def __init__(self, agent_name: str, agent_id: int, round_number: int, cause: str) -> None:
        self.agent_name = agent_name
        self.agent_id = agent_id
        self.round_number = round_number
        self.cause = cause
        super().__init__(f"Agent {agent_name!r} failed in round {round_number}: {cause}")


class LeaseLost(MagiError):
    pass


def new_worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


# --- database access ------------------------------------------------------------------
# Every query the engine makes goes through db_call: it runs the ORM in a small thread pool
# (one connection per thread, so judgements do not queue behind one another's queries) and
# rides out a database that is briefly unreachable instead of dying mid-judgement.

_executor: ThreadPoolExecutor | None = None
_executor_lock = threading.Lock()


def db_executor() -> ThreadPoolExecutor:
    global _executor
    with _executor_lock:
        if _executor is None:
            _executor = ThreadPoolExecutor(
                max_workers=max(1, settings.MAGI_DB_THREADS), thread_name_prefix="magi-db"
            )
        return _executor


def _in_db_thread(func):
    @functools.wraps(func)
    def guarded(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (OperationalError, InterfaceError):
            # This thread's connection may be dead (the server restarted): drop it so the
            # next try connects afresh.
            connections.close_all()
            raise

    return guarded


def db_call(func):
    guarded = _in_db_thread(func)

    @functools.wraps(func)
    async def wrapper(*args, **kwargs):
        run = sync_to_async(guarded, thread_sensitive=False, executor=db_executor())
        retrying = AsyncRetrying(
            retry=retry_if_exception_type((OperationalError, InterfaceError)),
            stop=stop_after_delay(settings.MAGI_DB_RETRY_SECONDS),
            wait=wait_exponential_jitter(multiplier=0.05, jitter=0.1, max=1.0),
            before_sleep=lambda state: log.warning(
                "database call %s failed (%s); retrying",
                func.__name__,
                state.outcome.exception() if state.outcome else "?",
            ),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                return await run(*args, **kwargs)
        return None  # pragma: no cover

    return wrapper


def claimable(now) -> Q:
    """Queued judgements, and started ones whose worker stopped renewing its lease and
    whose time is not up (those are failed by fail_overdue instead)."""
    deadline = now - timedelta(seconds=settings.MAGI_JUDGEMENT_TIMEOUT)
    return Q(status=Status.IDLE) | (
        Q(status=Status.JUDGING)
        & (Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True))
        & (Q(started_at__isnull=True) | Q(started_at__gte=deadline))
    )


def _claim_rows(worker_id: str, candidates, limit: int) -> list[int]:
    """Lease up to `limit` of the candidates to this worker, oldest first.

    PostgreSQL: SELECT ... FOR UPDATE SKIP LOCKED, so workers sweeping at the same moment
    take different rows instead of queueing on one another's locks; the UPDATE then only
    touches rows this transaction holds. SQLite ignores FOR UPDATE, but its IMMEDIATE
    transactions take the write lock at BEGIN, so the select-then-update is just as atomic;
    the conditional UPDATE re-checks claimability either way.
    """
    now = timezone.now()
    expires = now + timedelta(seconds=settings.MAGI_LEASE_SECONDS)
    with transaction.atomic():
        ids = list(
            candidates.filter(claimable(now))
            .select_for_update(skip_locked=True)
            .order_by("created_at", "pk")
            .values_list("pk", flat=True)[:limit]
        )
        if not ids:
            return []
        updated = Judgement.objects.filter(claimable(now), pk__in=ids).update(
            status=Status.JUDGING,
            lease_owner=worker_id,
            lease_expires_at=expires,
            started_at=Coalesce("started_at", now),
        )
        if updated != len(ids):  # pragma: no cover - the locks above make this impossible
            ids = list(
                Judgement.objects.filter(
                    pk__in=ids, lease_owner=worker_id, lease_expires_at=expires
                ).values_list("pk", flat=True)
            )
    return ids


@db_call
def claim(judgement_id: int, worker_id: str) -> bool:
    """Take the judgement if nobody holds a live lease on it. Atomic on every database."""
    return bool(_claim_rows(worker_id, Judgement.objects.filter(pk=judgement_id), 1))


@db_call
def claim_batch(worker_id: str, limit: int) -> list[int]:
    """Take up to `limit` judgements nobody is working on: lost wake-ups, dead workers."""
    if limit <= 0:
        return []
    return _claim_rows(worker_id, Judgement.objects.all(), limit)


@db_call
def renew_lease(judgement_id: int, worker_id: str) -> bool:
    expires = timezone.now() + timedelta(seconds=settings.MAGI_LEASE_SECONDS)
    return bool(
        Judgement.objects.filter(
            pk=judgement_id, status=Status.JUDGING, lease_owner=worker_id
        ).update(lease_expires_at=expires)
    )


def current_round(judgement_id: int) -> int:
    """The round a judgement was in: rounds complete in order, three decisions each."""
    stored = RoundDecision.objects.filter(agent__judgement_id=judgement_id).count()
    return min(stored // rules.PANEL_SIZE + 1, rules.ROUNDS)


def timeout_message(round_number: int) -> str:
    return (
        f"Judgement did not finish within {settings.MAGI_JUDGEMENT_TIMEOUT:g} s of its start "
        f"(given up in round {round_number})"
    )


@db_call
def fail_overdue(limit: int = 100) -> list[tuple[int, str]]:
    """End in error the judgements nobody holds whose time is up, instead of resuming them.

    A judgement whose workers keep dying (or that is resumed only after its deadline)
    cannot be finished in time; it must not stay "judging" forever.
    """
    now = timezone.now()
    deadline = now - timedelta(seconds=settings.MAGI_JUDGEMENT_TIMEOUT)
    failed = []
    with transaction.atomic():
        overdue = list(
            Judgement.objects.filter(
                Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True),
                status=Status.JUDGING,
                started_at__lt=deadline,
            )
            .select_for_update(skip_locked=True)
            .values_list("pk", "lease_owner")[:limit]
        )
        for judgement_id, owner in overdue:
            round_number = current_round(judgement_id)
            cause = f"worker {owner} stopped renewing its lease" if owner else "no worker held it"
            message = f"{timeout_message(round_number)}: {cause}"
            Judgement.objects.filter(pk=judgement_id).update(
                status=Status.ERROR,
                error_message=message,
                error_round=round_number,
                finished_at=now,
                lease_owner="",
                lease_expires_at=None,
            )
            failed.append((judgement_id, message))
    return failed


@dataclass
class Panel:
    judgement: Judgement
    agents: list[Agent]
    votes: dict[tuple[int, int], RoundDecision]

    def earlier_decisions(self, round_number: int) -> list[prompts.EarlierDecision]:
        names = {agent.pk: agent.name for agent in self.agents}
        return [
            prompts.EarlierDecision(names[agent_id], rnd, d.decision, d.reason)
            for (agent_id, rnd), d in sorted(self.votes.items(), key=lambda kv: kv[0][::-1])
            if rnd < round_number
        ]

    def agent_votes(self, agent: Agent) -> list[str]:
        return [
            self.votes[(agent.pk, rnd)].decision
            for rnd in range(1, rules.ROUNDS + 1)
            if (agent.pk, rnd) in self.votes
        ]


@db_call
def load_panel(judgement_id: int) -> Panel:
    judgement = Judgement.objects.get(pk=judgement_id)
    agents = list(judgement.agents.order_by("position"))
    votes = {(d.agent_id, d.round): d for d in RoundDecision.objects.filter(agent__in=agents)}
    return Panel(judgement, agents, votes)


def attempt_row(agent: Agent, round_number: int, route: llm.ModelRoute, entry) -> LLMAttempt:
    return LLMAttempt(
        agent=agent,
        round=round_number,
        attempt=entry.attempt,
        model=route.model,
        provider=route.provider,
        base_url=entry.base_url,
        request=entry.request,
        response_text=entry.response_text,
        error=entry.error,
        outcome=AttemptOutcome.OK if entry.ok else AttemptOutcome.FAILED,
        duration_ms=entry.duration_ms,
        prompt_tokens=entry.prompt_tokens,
        completion_tokens=entry.completion_tokens,
        started_at=entry.started_at,
    )


@db_call
def store_attempt(agent: Agent, round_number: int, route: llm.ModelRoute, entry) -> None:
    attempt_row(agent, round_number, route, entry).save()


@db_call
def store_decision(
    agent: Agent,
    round_number: int,
    route: llm.ModelRoute,
    result: llm.VerdictResult,
    worker_id: str,
) -> RoundDecision:
    """The decision and the attempt that produced it, in one transaction."""
    with transaction.atomic():
        # Only the lease holder may write: a worker that lost its lease stops here. While the
        # row is locked a concurrent claim skips it, so the check holds until we commit.
        if (
            not Judgement.objects.select_for_update()
            .filter(pk=agent.judgement_id, status=Status.JUDGING, lease_owner=worker_id)
            .exists()
        ):
            raise LeaseLost(f"judgement {agent.judgement_id} is no longer held by {worker_id}")
        attempt_row(agent, round_number, route, result.attempt).save()
        try:
            with transaction.atomic():
                return RoundDecision.objects.create(
                    agent=agent,
                    round=round_number,
                    decision=result.verdict.decision,
                    reason=result.verdict.reason,
                    latency_ms=result.latency_ms,
                    prompt_tokens=result.prompt_tokens,
                    completion_tokens=result.completion_tokens,
                )
        except IntegrityError:
            # Already decided by an earlier holder of the lease: the stored one stands.
            return RoundDecision.objects.get(agent=agent, round=round_number)


@db_call
def finish(panel: Panel, worker_id: str) -> Status:
    """Final scores and the panel decision, written together or not at all."""
    finals = []
    with transaction.atomic():
        for agent in panel.agents:
            votes = panel.agent_votes(agent)
            agent.final_score_tenths = rules.score_tenths(votes)
            agent.final_decision = rules.final_vote(votes).value
            agent.save(update_fields=["final_score_tenths", "final_decision"])
            finals.append(agent.final_decision)
        status = (
            Status.APPROVED
            if rules.panel_decision(finals) is rules.Vote.APPROVE
            else Status.REJECTED
        )
        updated = Judgement.objects.filter(
            pk=panel.judgement.pk, status=Status.JUDGING, lease_owner=worker_id
        ).update(status=status, finished_at=timezone.now(), lease_owner="", lease_expires_at=None)
        if not updated:
            raise LeaseLost(f"judgement {panel.judgement.pk} is no longer held by {worker_id}")
    return status


@db_call
def fail(
    judgement_id: int,
    message: str,
    *,
    worker_id: str | None,
    agent_id: int | None = None,
    round_number: int | None = None,
) -> bool:
    """End the judgement in error. Decisions already stored stay as they are."""
    owned = Q(lease_owner=worker_id) if worker_id else Q()
    return bool(
        Judgement.objects.filter(owned, pk=judgement_id)
        .exclude(status__in=[Status.APPROVED, Status.REJECTED, Status.ERROR])
        .update(
            status=Status.ERROR,
            error_message=message,
            error_agent_id=agent_id,
            error_round=round_number,
            finished_at=timezone.now(),
            lease_owner="",
            lease_expires_at=None,
        )
    )


# --- events -------------------------------------------------------------------------------


# After a failed send the layer is skipped for a moment, so a Redis that is away costs a
# judgement one bounded wait, not one per event.
LAYER_BACKOFF_SECONDS = 1.0
_layer_down_until = 0.0


async def _send_to_layer(send: Coroutine, what: str) -> bool:
    """Send on the channel layer, bounded in time. The database already holds the state, so
    a slow or absent Redis is logged and otherwise ignored."""
    global _layer_down_until
    if time.monotonic() < _layer_down_until:
        send.close()
        log.info("channel layer unavailable: skipped %s", what)
        return False
    try:
        async with asyncio.timeout(settings.MAGI_CHANNEL_SEND_TIMEOUT):
            await send
        return True
    except Exception:
        _layer_down_until = time.monotonic() + LAYER_BACKOFF_SECONDS
        log.warning("channel layer: could not %s", what, exc_info=log.isEnabledFor(logging.DEBUG))
        return False


async def publish(judgement_id: int, kind: str, listener: EventListener | None = None, **data):
    """The one way state changes leave the engine: to the page's group and a local listener.

    A failed send is logged, not raised: the database already holds the state, and a page
    resyncs from it when its socket reconnects.
    """
    event = {"type": "judgement.event", "kind": kind, "judgement_id": judgement_id, **data}
    layer = get_channel_layer()
    if layer is not None:
        await _send_to_layer(
            layer.group_send(group_name_for(judgement_id), event),
            f"publish {kind} for judgement {judgement_id}",
        )
    if listener is not None:
        await listener(event)


# --- the deliberation -----------------------------------------------------------------------


async def decide(
    panel: Panel, agent: Agent, round_number: int, worker_id: str, listener: EventListener | None
) -> RoundDecision:
    try:
        route = llm.route_for(agent.model)
        messages = prompts.build_messages(
            prompts.AgentBrief(agent.name, agent.criteria),
            panel.judgement.content,
            round_number,
            panel.earlier_decisions(round_number),
        )

        async def record_failure(entry: llm.AttemptRecord) -> None:
            await store_attempt(agent, round_number, route, entry)

        result = await llm.request_verdict(route, messages, record_failure)
    except MagiError as exc:
        raise AgentFailure(agent.name, agent.pk, round_number, str(exc)) from exc
    decision = await store_decision(agent, round_number, route, result, worker_id)
    panel.votes[(agent.pk, round_number)] = decision
    await publish(
        panel.judgement.pk,
        Event.DECISION_STORED,
        listener,
        agent_id=agent.pk,
        agent_name=agent.name,
        round=round_number,
        decision=decision.decision,
        reason=decision.reason,
    )
    return decision


async def run_round(
    panel: Panel, round_number: int, worker_id: str, listener: EventListener | None
) -> None:
    pending = [agent for agent in panel.agents if (agent.pk, round_number) not in panel.votes]
    if not pending:
        return
    await publish(
        panel.judgement.pk,
        Event.AGENTS_THINKING,
        listener,
        round=round_number,
        agent_ids=[agent.pk for agent in pending],
    )
    tasks = [
        asyncio.create_task(decide(panel, agent, round_number, worker_id, listener))
        for agent in pending
    ]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        # On failure (or our own cancellation) the round's other calls stop now.
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()


async def deliberate(
    panel: Panel, worker_id: str, listener: EventListener | None, progress: dict
) -> Status:
    judgement_id = panel.judgement.pk
    await publish(judgement_id, Event.JUDGING_STARTED, listener, title=panel.judgement.title)
    for round_number in range(1, rules.ROUNDS + 1):
        progress["round"] = round_number
        await run_round(panel, round_number, worker_id, listener)
        await publish(judgement_id, Event.ROUND_DONE, listener, round=round_number)
    return await finish(panel, worker_id)


async def keep_lease(judgement_id: int, worker_id: str, work: asyncio.Task, lost: asyncio.Event):
    """Renew the lease while `work` runs; stop the work once someone else holds it.

    A database that is away only delays the renewal: if nobody took the judgement in the
    meantime, the renewal that gets through keeps it ours (store_decision and finish check
    ownership in any case).
    """
    interval = settings.MAGI_LEASE_SECONDS / 3
    while not work.done():
        await asyncio.sleep(interval)
        try:
            held = await renew_lease(judgement_id, worker_id)
        except (OperationalError, InterfaceError):
            log.warning("could not renew the lease on judgement %s; trying again", judgement_id)
            continue
        if not held:
            log.warning("lost the lease on judgement %s; stopping", judgement_id)
            lost.set()
            work.cancel()
            return


async def run_judgement(
    judgement_id: int,
    *,
    worker_id: str | None = None,
    listener: EventListener | None = None,
    claimed: bool = False,
) -> bool:
    """Run (or resume) one judgement to its end. False if someone else holds it.

    `claimed` says the caller already holds the lease (the sweeper claims in batches).
    """
    worker_id = worker_id or new_worker_id()
    if not claimed and not await claim(judgement_id, worker_id):
        return False
    panel = await load_panel(judgement_id)
    progress = {"round": 1}
    # The deadline counts from the first claim, across resumes.
    started = panel.judgement.started_at or timezone.now()
    remaining = settings.MAGI_JUDGEMENT_TIMEOUT - (timezone.now() - started).total_seconds()
    work = asyncio.create_task(deliberate(panel, worker_id, listener, progress))
    lost = asyncio.Event()
    renewer = asyncio.create_task(keep_lease(judgement_id, worker_id, work, lost))
    try:
        async with asyncio.timeout(max(remaining, 0.0)):
            status = await work
        await publish(judgement_id, Event.FINISHED, listener, status=status.value)
    except AgentFailure as failure:
        await end_in_error(
            judgement_id,
            str(failure),
            worker_id,
            listener,
            agent_id=failure.agent_id,
            round_number=failure.round_number,
        )
    except TimeoutError:
        message = timeout_message(progress["round"])
        log.warning("judgement %s: %s", judgement_id, message)
        await end_in_error(
            judgement_id, message, worker_id, listener, round_number=progress["round"]
        )
    except LeaseLost:
        log.warning("judgement %s was taken over by another worker", judgement_id)
    except (OperationalError, InterfaceError):
        # The database stayed away longer than we wait for it. The lease will expire and
        # a worker resumes the judgement from what was stored.
        log.exception("database unavailable while judging %s", judgement_id)
        raise
    except asyncio.CancelledError:
        if lost.is_set() and not _cancelling(asyncio.current_task()):
            log.warning("judgement %s was taken over by another worker", judgement_id)
        else:
            raise
    except Exception as exc:
        log.exception("judgement %s failed unexpectedly", judgement_id)
        message = f"Internal error: {type(exc).__name__}: {exc}"
        await end_in_error(judgement_id, message, worker_id, listener)
    finally:
        renewer.cancel()
        if not work.done():
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
    return True


def _cancelling(task: asyncio.Task | None) -> bool:
    return task is not None and task.cancelling() > 0


async def end_in_error(
    judgement_id: int,
    message: str,
    worker_id: str,
    listener: EventListener | None,
    *,
    agent_id: int | None = None,
    round_number: int | None = None,
) -> None:
    if await fail(
        judgement_id, message, worker_id=worker_id, agent_id=agent_id, round_number=round_number
    ):
        await publish(judgement_id, Event.FAILED, listener, message=message)


# --- running judgements in a worker process ------------------------------------------------

_running: dict[int, asyncio.Task] = {}
# Set when a judgement ends here, so the sweeper looks for waiting work at once (per loop:
# an asyncio.Event belongs to one event loop).
_capacity_freed: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def running_count() -> int:
    return sum(1 for task in _running.values() if not task.done())


def free_capacity() -> int:
    return max(settings.MAGI_WORKER_CONCURRENCY - running_count(), 0)


def _capacity_event() -> asyncio.Event:
    return _capacity_freed.setdefault(asyncio.get_running_loop(), asyncio.Event())


def _finished(judgement_id: int, task: asyncio.Task) -> None:
    if _running.get(judgement_id) is task:
        del _running[judgement_id]
    if not task.cancelled() and task.exception() is not None:
        log.error(
            "judgement %s stopped: %r; a worker resumes it once its lease expires",
            judgement_id,
            task.exception(),
        )
    # A slot is free: let the sweeper look for waiting work now, not at its next tick.
    _capacity_event().set()


def start(judgement_id: int, worker_id: str, *, claimed: bool = False) -> asyncio.Task | None:
    """Run a judgement in the background of this process, once, within the worker's
    concurrency. None if it already runs here or there is no room (it waits in the
    database, and the sweeper takes it when a slot frees up)."""
    task = _running.get(judgement_id)
    if task is not None and not task.done():
        return None
    if not claimed and not free_capacity():
        return None
    task = asyncio.create_task(
        run_judgement(judgement_id, worker_id=worker_id, claimed=claimed),
        name=f"judgement-{judgement_id}",
    )
    _running[judgement_id] = task
    task.add_done_callback(functools.partial(_finished, judgement_id))
    return task


async def sweep(worker_id: str) -> list[int]:
    """Pick up judgements nobody is working on: lost wake-ups and dead workers' leases; end
    in error those whose time is up."""
    for judgement_id, message in await fail_overdue():
        log.warning("judgement %s: %s", judgement_id, message)
        await publish(judgement_id, Event.FAILED, None, message=message)
    started = []
    for judgement_id in await claim_batch(worker_id, free_capacity()):
        if start(judgement_id, worker_id, claimed=True) is not None:
            started.append(judgement_id)
    return started


async def sweep_forever(worker_id: str) -> None:
    freed = _capacity_event()
    while True:
        freed.clear()
        try:
            await sweep(worker_id)
        except Exception:
            log.exception("sweep failed; trying again later")
        try:
            async with asyncio.timeout(settings.MAGI_SWEEP_INTERVAL):
                await freed.wait()
        except TimeoutError:
            pass


async def wake(judgement_id: int) -> None:
    """Tell a worker there is work. Losing this message loses nothing: the sweeper finds
    queued judgements in the database."""
    layer = get_channel_layer()
    if layer is None:
        return
    await _send_to_layer(
        layer.send(
            settings.MAGI_ENGINE_CHANNEL, {"type": "judgement.run", "judgement_id": judgement_id}
        ),
        f"wake a worker for judgement {judgement_id}",
    )
