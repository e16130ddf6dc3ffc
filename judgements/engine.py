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
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import IntegrityError, InterfaceError, OperationalError, close_old_connections
from django.db import transaction
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
# Every query the engine makes goes through db_call: it runs the ORM off the event loop
# and rides out a database that is briefly unreachable instead of dying mid-judgement.


def db_call(func):
    run = sync_to_async(func)

    @functools.wraps(func)
    async def wrapper(*args, **kwargs):
        retrying = AsyncRetrying(
            retry=retry_if_exception_type((OperationalError, InterfaceError)),
            stop=stop_after_delay(settings.MAGI_DB_RETRY_SECONDS),
            wait=wait_exponential_jitter(multiplier=0.1, jitter=0.1, max=2.0),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                try:
                    return await run(*args, **kwargs)
                except (OperationalError, InterfaceError):
                    await sync_to_async(close_old_connections)()
                    log.warning("database call %s failed; retrying", func.__name__)
                    raise
        return None  # pragma: no cover

    return wrapper


@db_call
def claim(judgement_id: int, worker_id: str) -> bool:
    """Take the judgement if nobody holds a live lease on it. Atomic on every database."""
    now = timezone.now()
    claimable = Q(status=Status.IDLE) | Q(status=Status.JUDGING) & (
        Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True)
    )
    return bool(
        Judgement.objects.filter(claimable, pk=judgement_id).update(
            status=Status.JUDGING,
            lease_owner=worker_id,
            lease_expires_at=now + timedelta(seconds=settings.MAGI_LEASE_SECONDS),
            started_at=Coalesce("started_at", now),
        )
    )


@db_call
def renew_lease(judgement_id: int, worker_id: str) -> bool:
    expires = timezone.now() + timedelta(seconds=settings.MAGI_LEASE_SECONDS)
    return bool(
        Judgement.objects.filter(
            pk=judgement_id, status=Status.JUDGING, lease_owner=worker_id
        ).update(lease_expires_at=expires)
    )


@db_call
def claimable_ids(limit: int = 100) -> list[int]:
    """Judgements nobody is working on: queued ones and those whose lease expired."""
    now = timezone.now()
    stale = Q(status=Status.IDLE) | Q(status=Status.JUDGING) & (
        Q(lease_expires_at__lt=now) | Q(lease_expires_at__isnull=True)
    )
    return list(
        Judgement.objects.filter(stale).order_by("created_at").values_list("pk", flat=True)[:limit]
    )


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
    votes = {
        (d.agent_id, d.round): d for d in RoundDecision.objects.filter(agent__in=agents)
    }
    return Panel(judgement, agents, votes)


@db_call
def store_attempt(agent: Agent, round_number: int, route: llm.ModelRoute, entry) -> None:
    LLMAttempt.objects.create(
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
def store_decision(
    agent: Agent, round_number: int, result: llm.VerdictResult, worker_id: str
) -> RoundDecision:
    with transaction.atomic():
        # Only the lease holder may write: a worker that lost its lease stops here.
        if not Judgement.objects.filter(
            pk=agent.judgement_id, status=Status.JUDGING, lease_owner=worker_id
        ).exists():
            raise LeaseLost(f"judgement {agent.judgement_id} is no longer held by {worker_id}")
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
        ).update(
            status=status, finished_at=timezone.now(), lease_owner="", lease_expires_at=None
        )
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


async def publish(judgement_id: int, kind: str, listener: EventListener | None = None, **data):
    """The one way state changes leave the engine: to the page's group and a local listener.

    A failed send is logged, not raised: the database already holds the state, and a page
    resyncs from it when its socket reconnects.
    """
    event = {"type": "judgement.event", "kind": kind, "judgement_id": judgement_id, **data}
    layer = get_channel_layer()
    if layer is not None:
        try:
            await layer.group_send(group_name_for(judgement_id), event)
        except Exception:
            log.warning("could not publish %s for judgement %s", kind, judgement_id, exc_info=True)
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

        async def record(entry: llm.AttemptRecord) -> None:
            await store_attempt(agent, round_number, route, entry)

        result = await llm.request_verdict(route, messages, record)
    except MagiError as exc:
        raise AgentFailure(agent.name, agent.pk, round_number, str(exc)) from exc
    decision = await store_decision(agent, round_number, result, worker_id)
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
        done, still_running = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        # On failure (or our own cancellation) the round's other calls stop now.
        for task in tasks:
            if not task.done():
                task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()


async def keep_lease(judgement_id: int, worker_id: str, holder: asyncio.Task) -> None:
    interval = settings.MAGI_LEASE_SECONDS / 3
    while True:
        await asyncio.sleep(interval)
        if not await renew_lease(judgement_id, worker_id):
            log.warning("lost the lease on judgement %s; stopping", judgement_id)
            holder.cancel()
            return


async def deliberate(judgement_id: int, worker_id: str, listener: EventListener | None) -> None:
    panel = await load_panel(judgement_id)
    await publish(judgement_id, Event.JUDGING_STARTED, listener, title=panel.judgement.title)
    for round_number in range(1, rules.ROUNDS + 1):
        await run_round(panel, round_number, worker_id, listener)
        await publish(judgement_id, Event.ROUND_DONE, listener, round=round_number)
    status = await finish(panel, worker_id)
    await publish(judgement_id, Event.FINISHED, listener, status=status.value)


async def run_judgement(
    judgement_id: int, *, worker_id: str | None = None, listener: EventListener | None = None
) -> bool:
    """Run (or resume) one judgement to its end. False if someone else holds it."""
    worker_id = worker_id or new_worker_id()
    if not await claim(judgement_id, worker_id):
        return False
    work = asyncio.current_task()
    renewer = asyncio.create_task(keep_lease(judgement_id, worker_id, work))
    try:
        await deliberate(judgement_id, worker_id, listener)
    except AgentFailure as failure:
        await fail(
            judgement_id,
            str(failure),
            worker_id=worker_id,
            agent_id=failure.agent_id,
            round_number=failure.round_number,
        )
        await publish(judgement_id, Event.FAILED, listener, message=str(failure))
    except LeaseLost:
        log.warning("judgement %s was taken over by another worker", judgement_id)
    except (OperationalError, InterfaceError):
        # The database stayed away longer than we wait for it. The lease will expire and
        # a worker resumes the judgement from what was stored.
        log.exception("database unavailable while judging %s", judgement_id)
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("judgement %s failed unexpectedly", judgement_id)
        message = f"Internal error: {type(exc).__name__}: {exc}"
        await fail(judgement_id, message, worker_id=worker_id)
        await publish(judgement_id, Event.FAILED, listener, message=message)
    finally:
        renewer.cancel()
    return True


# --- running judgements in a worker process ------------------------------------------------

_running: dict[int, asyncio.Task] = {}


def start(judgement_id: int, worker_id: str) -> asyncio.Task | None:
    """Run a judgement in the background of this process, once."""
    task = _running.get(judgement_id)
    if task is not None and not task.done():
        return None
    task = asyncio.create_task(run_judgement(judgement_id, worker_id=worker_id))
    _running[judgement_id] = task
    task.add_done_callback(lambda _: _running.pop(judgement_id, None))
    return task


async def sweep(worker_id: str) -> list[int]:
    """Pick up judgements nobody is working on: lost wake-ups and dead workers' leases."""
    started = []
    for judgement_id in await claimable_ids():
        if start(judgement_id, worker_id) is not None:
            started.append(judgement_id)
    return started


async def sweep_forever(worker_id: str) -> None:
    while True:
        try:
            await sweep(worker_id)
        except Exception:
            log.exception("sweep failed; trying again later")
        await asyncio.sleep(settings.MAGI_SWEEP_INTERVAL)


async def wake(judgement_id: int) -> None:
    """Tell a worker there is work. Losing this message loses nothing: the sweeper finds
    queued judgements in the database."""
    layer = get_channel_layer()
    try:
        await layer.send(
            settings.MAGI_ENGINE_CHANNEL, {"type": "judgement.run", "judgement_id": judgement_id}
        )
    except Exception:
        log.warning("could not wake a worker for judgement %s", judgement_id, exc_info=True)
