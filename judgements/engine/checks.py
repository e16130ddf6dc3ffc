"""The checks beside round 1 of a judgement: whatever the judgement asked for
(Judgement.checks_asked), each kind a class of judgements/core/checks.py asked the same
way, all at once beside the rounds (engine/deliberation.py). Each is stored as the
audited call it was, with its finding; none is a vote, and none can end a judgement: a
check that fails for good leaves its finding unknown, which no certificate keeps
(judgements/core/contested.py).
"""

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from judgements.core import checks, prompts
from judgements.core.errors import MagiError
from judgements.engine import writes
from judgements.engine.lease import HeldLease, LeaseLost
from judgements.llm import calls, completions, providers
from judgements.models.agents import Agent
from judgements.models.checks import finding_fields
from judgements.models.judgements import Judgement
from judgements.models.magi_settings import magi_settings

log = logging.getLogger(__name__)


class Deliberating(Protocol):
    """What the checks read of the deliberation that starts them (engine/deliberation.py
    `Deliberation`, which imports this module): the judgement, its agents, the checks
    already stored and the prompt variants it runs."""

    judgement: Judgement
    agents: list[Agent]
    checks_done: set[tuple[str, int | None]]

    @property
    def variants(self) -> frozenset[prompts.Variant]: ...


def route_of(deliberation: Deliberating, model: str) -> completions.ModelRoute:
    route: completions.ModelRoute = providers.route_for(model)
    if deliberation.judgement.evaluation_run_id is not None:
        route = dataclasses.replace(route, batch=True)
    return route


def check_model(deliberation: Deliberating) -> str:
    """The model of the judgement-wide checks: the deployment's choice, else the first
    agent's."""
    return magi_settings.MAGI_CHECK_MODEL or deliberation.agents[0].model


async def run_checks(deliberation: Deliberating, lease: HeldLease, clients: calls.Clients) -> None:
    """Every check the judgement asked for (Judgement.checks_asked) not yet stored, at once:
    a kind asked of each agent once per agent, any other once."""
    done = deliberation.checks_done
    jobs: list[Awaitable[None]] = []
    for kind in deliberation.judgement.checks_asked:
        check = checks.of_kind(kind)
        if check is None:
            # A kind no longer registered: nothing knows how to ask it.
            log.warning("judgement %s: no check of kind %r", deliberation.judgement.pk, kind)
            continue
        targets: list[Agent | None] = list(deliberation.agents) if check.per_agent else [None]
        jobs.extend(
            run_check(deliberation, check, agent, lease, clients)
            for agent in targets
            if (kind, None if agent is None else agent.pk) not in done
        )
    await asyncio.gather(*jobs)


def subject_of(deliberation: Deliberating, agent: Agent | None) -> checks.Subject:
    briefs = tuple(prompts.AgentBrief(a.name, a.criteria) for a in deliberation.agents)
    brief = None if agent is None else prompts.AgentBrief(agent.name, agent.criteria)
    return checks.Subject(deliberation.judgement.content, briefs, brief, deliberation.variants)


def validated(check: checks.Check, question: checks.Question) -> Callable[[str], object]:
    """The reply read as the check reads it, an invalid one an InvalidOutputError: asked
    again like an invalid vote."""

    def read(text: str) -> object:
        try:
            return question.read(checks.Reply(text))
        except ValueError as exc:
            invalid = f"invalid {check.label.lower()}: {text[:200]!r}"
            raise completions.InvalidOutputError(invalid) from exc

    return read


async def run_check(
    deliberation: Deliberating,
    check: checks.Check,
    agent: Agent | None,
    lease: HeldLease,
    clients: calls.Clients,
) -> None:
    """One check's call, its failed attempts stored as they happen, and its finding
    stored with the call that found it. A check that fails for good stores no finding
    (it stays unknown)."""
    judgement_id = deliberation.judgement.pk
    question = check.question(subject_of(deliberation, agent))
    model = agent.model if agent is not None else check_model(deliberation)
    try:
        route = route_of(deliberation, model)
    except MagiError:
        # A check model the deployment does not know: nothing was sent, nothing to audit.
        return

    async def record_failure(entry: calls.AttemptRecord) -> None:
        await writes.astore_failed_check(judgement_id, check.kind, agent, route, entry)

    await lease.confirm()
    try:
        reply = await calls.request_text(
            clients,
            route,
            question.messages,
            record_failure,
            max_tokens=question.max_tokens,
            schema=question.schema,
            read=validated(check, question),
        )
    except LeaseLost:
        raise
    except MagiError:
        return
    found = question.read(checks.Reply(reply.text, reply.tokens))
    await writes.astore_check(
        judgement_id,
        check.kind,
        agent,
        route,
        reply.attempt,
        lease.worker_id,
        **finding_fields(found),
    )
