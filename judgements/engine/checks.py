"""The calls beside the vote, run beside round 1: a confidence probe per agent, a second
opinion and an injection screen (judgements/core/check_prompts.py). Each is stored as the
audited call it was, with its finding; none is a vote, and none can end a judgement: a
check that fails for good leaves its finding unknown, which no certificate keeps
(judgements/core/contested.py).
"""

import asyncio
import dataclasses
from collections.abc import Coroutine
from typing import Any

from django.conf import settings

from judgements.core import check_prompts, confidence, prompts
from judgements.core.errors import MagiError
from judgements.engine import storage
from judgements.engine.lease import HeldLease, LeaseLost
from judgements.engine.state import Deliberation
from judgements.llm import calls, providers
from judgements.models import Agent, CheckKind


def route_of(deliberation: Deliberation, model: str) -> calls.ModelRoute:
    route = providers.route_for(model)
    if deliberation.judgement.evaluation_run_id is not None:
        route = dataclasses.replace(route, batch=True)
    return route


def check_model(deliberation: Deliberation) -> str:
    """The model of the judgement-wide checks: the deployment's choice, else the first
    agent's."""
    return settings.MAGI_CHECK_MODEL or deliberation.agents[0].model


async def run_checks(deliberation: Deliberation, lease: HeldLease, clients: calls.Clients) -> None:
    """Every check the judgement asked for (Judgement.checks_asked) not yet stored, at once."""
    asked = set(deliberation.judgement.checks_asked)
    done = deliberation.checks_done
    jobs: list[Coroutine[Any, Any, None]] = []
    if CheckKind.PROBE in asked:
        jobs.extend(
            probe(deliberation, agent, lease, clients)
            for agent in deliberation.agents
            if (CheckKind.PROBE, agent.pk) not in done
        )
    if CheckKind.SECOND_OPINION in asked and (CheckKind.SECOND_OPINION, None) not in done:
        jobs.append(second_opinion(deliberation, lease, clients))
    if CheckKind.SCREEN in asked and (CheckKind.SCREEN, None) not in done:
        jobs.append(screen(deliberation, lease, clients))
    await asyncio.gather(*jobs)


async def ask(
    deliberation: Deliberation,
    kind: str,
    agent: Agent | None,
    model: str,
    messages: list[dict[str, str]],
    lease: HeldLease,
    clients: calls.Clients,
    **options,
) -> tuple[calls.ModelRoute, calls.TextReply] | None:
    """One check's call, its failed attempts stored as they happen; None when it failed
    for good (the finding stays unknown)."""
    judgement_id = deliberation.judgement.pk
    try:
        route = route_of(deliberation, model)
    except MagiError:
        # A check model the deployment does not know: nothing was sent, nothing to audit.
        return None

    async def record_failure(entry: calls.AttemptRecord) -> None:
        await storage.store_failed_check(judgement_id, kind, agent, route, entry)

    await lease.confirm()
    try:
        reply = await calls.request_text(clients, route, messages, record_failure, **options)
    except LeaseLost:
        raise
    except MagiError:
        return None
    return route, reply


async def probe(
    deliberation: Deliberation, agent: Agent, lease: HeldLease, clients: calls.Clients
) -> None:
    messages = check_prompts.probe_messages(
        prompts.AgentBrief(agent.name, agent.criteria), deliberation.judgement.content
    )
    asked = await ask(
        deliberation,
        CheckKind.PROBE,
        agent,
        agent.model,
        messages,
        lease,
        clients,
        max_tokens=check_prompts.PROBE_MAX_TOKENS,
    )
    if asked is None:
        return
    route, reply = asked
    p_approve = None if reply.tokens is None else confidence.probe_probability(reply.tokens)
    await storage.store_check(
        deliberation.judgement.pk,
        CheckKind.PROBE,
        agent,
        route,
        reply.attempt,
        lease.worker_id,
        p_approve=p_approve,
    )


def read_second_opinion(text: str) -> check_prompts.SecondOpinion:
    try:
        return check_prompts.parse_second_opinion(text)
    except ValueError as exc:
        raise calls.InvalidOutputError(f"invalid second opinion: {text[:200]!r}") from exc


async def second_opinion(
    deliberation: Deliberation, lease: HeldLease, clients: calls.Clients
) -> None:
    messages = check_prompts.second_opinion_messages(
        [agent.criteria for agent in deliberation.agents], deliberation.judgement.content
    )
    asked = await ask(
        deliberation,
        CheckKind.SECOND_OPINION,
        None,
        check_model(deliberation),
        messages,
        lease,
        clients,
        schema=check_prompts.SECOND_OPINION_SCHEMA,
        read=read_second_opinion,
    )
    if asked is None:
        return
    route, reply = asked
    opinion = read_second_opinion(reply.text)
    p_approve = None if reply.tokens is None else confidence.answer_probability(reply.tokens)
    await storage.store_check(
        deliberation.judgement.pk,
        CheckKind.SECOND_OPINION,
        None,
        route,
        reply.attempt,
        lease.worker_id,
        decision=opinion.decision,
        p_approve=p_approve,
    )


async def screen(deliberation: Deliberation, lease: HeldLease, clients: calls.Clients) -> None:
    canary = check_prompts.new_canary()
    messages = check_prompts.screen_messages(deliberation.judgement.content, canary)
    asked = await ask(
        deliberation,
        CheckKind.SCREEN,
        None,
        check_model(deliberation),
        messages,
        lease,
        clients,
        max_tokens=check_prompts.SCREEN_MAX_TOKENS,
    )
    if asked is None:
        return
    route, reply = asked
    await storage.store_check(
        deliberation.judgement.pk,
        CheckKind.SCREEN,
        None,
        route,
        reply.attempt,
        lease.worker_id,
        steered=check_prompts.screen_steered(reply.text, canary),
    )
