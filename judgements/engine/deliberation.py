"""The deliberation itself: three rounds, the three calls of a round at once, each
decision stored and announced the moment it arrives.

One decision, top to bottom (`decide`): build the agent's prompt from the judgement and
the earlier rounds, ask its model through `llm`, check the answer (judgements/
answer_checks.py) and ask once more if the check finds it calling missing what the
content states or copying a peer's reason, store the answer with the attempt that
produced it (only while this worker holds the lease), publish the change. No round starts
and no call goes out on a lease not made sure of within half a lease (engine/lease.py).
"""

import asyncio
import dataclasses

from judgements.core import answer_checks, prompts, rules
from judgements.core.errors import MagiError
from judgements.engine import checks, storage
from judgements.engine.lease import HeldLease, LeaseLost
from judgements.engine.state import Deliberation
from judgements.infrastructure.events import Event, publish
from judgements.llm import calls, providers
from judgements.models import Agent, RoundDecision, Status


class AgentFailure(MagiError):
    """An agent's call failed for good: the judgement ends in error naming it."""

    def __init__(self, agent: Agent, round_number: int, cause: str) -> None:
        self.agent_id = agent.pk
        self.round_number = round_number
        super().__init__(f"Agent {agent.name!r} failed in round {round_number}: {cause}")


async def decide(
    deliberation: Deliberation,
    agent: Agent,
    round_number: int,
    lease: HeldLease,
    clients: calls.Clients,
) -> RoundDecision:
    try:
        route = providers.route_for(agent.model)
        if deliberation.judgement.evaluation_run_id is not None:
            route = dataclasses.replace(route, batch=True)
        messages = prompts.build_messages(
            prompts.AgentBrief(agent.name, agent.criteria),
            deliberation.judgement.content,
            round_number,
            deliberation.earlier_decisions(round_number),
        )

        async def record_failure(entry: calls.AttemptRecord) -> None:
            await storage.store_failed_attempt(agent, round_number, route, entry)

        await lease.confirm()
        result = await calls.request_verdict(clients, route, messages, record_failure)
        findings = check(deliberation, agent, round_number, result.verdict)
        if findings:
            # Not a vote as it stands: asked once more with the finding pointed out. What
            # the second answer says is stored, whatever it says; if the finding persists
            # the contested mark reports it (judgements/core/contested.py).
            await storage.store_rechecked_attempt(agent, round_number, route, result.attempt)
            again = prompts.recheck_messages(
                messages,
                result.attempt.response_text,
                recheck_note(findings),
                prompts.fence_token(deliberation.judgement.content),
            )
            await lease.confirm()
            result = await calls.request_verdict(
                clients, route, again, record_failure, first_attempt=result.attempt.attempt + 1
            )
    except LeaseLost:
        raise
    except MagiError as exc:
        raise AgentFailure(agent, round_number, str(exc)) from exc
    decision = await storage.store_decision(agent, round_number, route, result, lease.worker_id)
    deliberation.votes[(agent.pk, round_number)] = decision
    await publish(
        deliberation.judgement.pk,
        Event.DECISION_STORED,
        agent_id=agent.pk,
        round=round_number,
        decision=decision.decision,
    )
    return decision


def check(
    deliberation: Deliberation,
    agent: Agent,
    round_number: int,
    verdict: prompts.AgentVerdict,
) -> answer_checks.Findings:
    """What can be checked in the answer: a reject's `missing` items the content states,
    and a reason copied from a peer."""
    earlier = [
        answer_checks.EarlierReason(d.agent_name, d.round, d.reason)
        for d in deliberation.earlier_decisions(round_number)
    ]
    return answer_checks.check_answer(
        agent.name,
        round_number,
        verdict.decision,
        verdict.reason,
        verdict.missing,
        deliberation.judgement.content,
        earlier,
    )


def recheck_note(findings: answer_checks.Findings) -> str:
    copied = findings.copied
    return prompts.recheck_note(
        list(findings.stated),
        copied.agent_name if copied else None,
        copied.round if copied else None,
    )


async def run_round(
    deliberation: Deliberation, round_number: int, lease: HeldLease, clients: calls.Clients
) -> None:
    """Ask every agent that has not decided this round yet, all at once. The first call
    that fails for good cancels the others and is raised."""
    pending = deliberation.undecided(round_number)
    if not pending:
        return
    await lease.confirm()
    await publish(
        deliberation.judgement.pk,
        Event.AGENTS_THINKING,
        round=round_number,
        agent_ids=[agent.pk for agent in pending],
    )
    tasks = [
        asyncio.create_task(decide(deliberation, agent, round_number, lease, clients))
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
        if not task.cancelled() and (failure := task.exception()) is not None:
            raise failure


async def deliberate(
    deliberation: Deliberation, lease: HeldLease, clients: calls.Clients
) -> Status:
    """Run the rounds still to run, in order, with the checks beside them
    (engine/checks.py), then store the outcome."""
    judgement_id = deliberation.judgement.pk
    await publish(judgement_id, Event.JUDGING_STARTED)
    beside = asyncio.create_task(checks.run_checks(deliberation, lease, clients))
    try:
        for round_number in range(deliberation.round_under_way(), rules.ROUNDS + 1):
            await run_round(deliberation, round_number, lease, clients)
            await publish(judgement_id, Event.ROUND_DONE, round=round_number)
        await beside
    finally:
        # A round that failed for good ends the judgement: its checks stop too.
        if not beside.done():
            beside.cancel()
        await asyncio.gather(beside, return_exceptions=True)
    return await storage.store_outcome(deliberation, lease.worker_id)
