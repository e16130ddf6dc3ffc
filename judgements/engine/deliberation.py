"""The deliberation of one judgement, read top to bottom: what the engine knows of it while
it runs it, and the three rounds (the three calls of a round at once, each decision
stored and announced the moment it arrives), begun beside the calls round 1 asks for
(the checks the judgement asked for: engine/checks.py).

One decision, top to bottom (`decide`): build the agent's prompt from the judgement and
the earlier rounds, ask it (engine/asking.py: the model through `llm`, the answer checked
and asked once more if a check finds something), read the vote (with the CALIBRATED
variant, from the answer's P(approve); with TURN_NEEDS_REASON, a turn on nothing of its
own, and with TURN_TO_REJECT_NAMES_CONTENT, a turn to reject on a reason naming nothing of
the content, leaves the vote as it was), store the answer with the attempt that
produced it (only while this worker holds the lease: engine/writes.py), publish the
change. No round starts and no call goes out on a lease not made sure of within half a
lease (`HeldLease`).
"""

import asyncio
import dataclasses
import logging
from dataclasses import dataclass, field

from judgements.core import calibration, own_criterion, prompt_variants, prompts, rules
from judgements.core.errors import MagiError
from judgements.engine import asking, lifecycle, writes
from judgements.engine.checks import run_checks
from judgements.engine.lease import HeldLease, LeaseLost
from judgements.infrastructure.database import db_call
from judgements.infrastructure.events import Event, publish
from judgements.llm import calls, providers
from judgements.models.agents import Agent, RoundDecision
from judgements.models.certificates import agents_fingerprint
from judgements.models.checks import JudgementCheck
from judgements.models.choices import Status
from judgements.models.judgements import Judgement

log = logging.getLogger(__name__)


class AgentFailure(MagiError):
    """An agent's call failed for good: the judgement ends in error naming it."""

    def __init__(self, agent: Agent, round_number: int, cause: str) -> None:
        self.agent_id = agent.pk
        self.round_number = round_number
        super().__init__(f"Agent {agent.name!r} failed in round {round_number}: {cause}")


# --- what the engine knows of a judgement it runs -----------------------------------


@dataclass
class Deliberation:
    """A judgement, its three agents and every vote stored so far, keyed (agent, round):
    plain data read from the database once (`load`); the questions asked of it (who is
    undecided, which round is under way, what the agents see of earlier rounds) need no
    database."""

    judgement: Judgement
    agents: list[Agent]
    votes: dict[tuple[int, int], RoundDecision]
    # The checks beside the vote already stored with a finding, as (kind, agent id or
    # None): a resumed judgement asks only the others.
    checks_done: set[tuple[str, int | None]] = field(default_factory=set)
    # The CALIBRATED variant's learned offset per agent id (judgements/core/calibration.py);
    # empty when the variant is off or its panel learned none for these agents.
    offsets: dict[int, float | None] = field(default_factory=dict)

    @property
    def variants(self) -> frozenset[prompts.Variant]:
        """The prompt variants it runs (validated when its run or bench set them)."""
        return prompt_variants.parse(self.judgement.prompt_variants or ())

    def earlier_decisions(self, round_number: int) -> list[prompts.EarlierDecision]:
        names = {agent.pk: agent.name for agent in self.agents}
        criteria = {agent.pk: agent.criteria for agent in self.agents}
        return [
            prompts.EarlierDecision(
                names[agent_id], rnd, d.decision, d.reason, criteria[agent_id], tuple(d.missing)
            )
            for (agent_id, rnd), d in sorted(self.votes.items(), key=lambda kv: kv[0][::-1])
            if rnd < round_number
        ]

    def agent_votes(self, agent: Agent) -> list[str]:
        return [
            self.votes[(agent.pk, rnd)].decision
            for rnd in range(1, rules.ROUNDS + 1)
            if (agent.pk, rnd) in self.votes
        ]

    def undecided(self, round_number: int) -> list[Agent]:
        return [agent for agent in self.agents if (agent.pk, round_number) not in self.votes]

    def round_under_way(self) -> int:
        return rules.round_under_way([len(self.agent_votes(agent)) for agent in self.agents])


@db_call
def load(judgement_id: int) -> Deliberation:
    judgement = Judgement.objects.get(pk=judgement_id)
    agents = list(judgement.agents.order_by("position"))
    votes = {(d.agent_id, d.round): d for d in RoundDecision.objects.filter(agent__in=agents)}
    done: set[tuple[str, int | None]] = set()
    if judgement.checks_asked:
        done = set(
            JudgementCheck.objects.filter(judgement=judgement, error="").values_list(
                "kind", "agent_id"
            )
        )
    return Deliberation(judgement, agents, votes, done, learned_offsets(judgement, agents))


def learned_offsets(judgement: Judgement, agents: list[Agent]) -> dict[int, float | None]:
    """Agent id -> its panel's learned offset, for a judgement of the CALIBRATED variant
    whose saved panel learned one for exactly these agents asked with these variants
    (core/calibration.py offsets_for); otherwise empty (no change)."""
    if prompts.Variant.CALIBRATED not in (judgement.prompt_variants or ()):
        return {}
    panel = judgement.panel
    if panel is None or not panel.calibration:
        return {}
    fingerprint = agents_fingerprint(
        {"model": agent.model, "criteria": agent.criteria} for agent in agents
    )
    stored = calibration.PanelCalibration.from_dict(panel.calibration)
    offsets = stored.offsets_for(fingerprint, judgement.prompt_variants or ())
    return {} if offsets is None else dict(zip([a.pk for a in agents], offsets, strict=True))


# --- the rounds ---------------------------------------------------------------------


async def deliberate(
    deliberation: Deliberation, lease: HeldLease, clients: calls.Clients
) -> Status:
    """Run the rounds still to run, in order, with the checks beside them, then finish
    the judgement with the verdict (lifecycle.finish)."""
    judgement_id = deliberation.judgement.pk
    beside = asyncio.create_task(run_checks(deliberation, lease, clients))
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
    votes = {agent: deliberation.agent_votes(agent) for agent in deliberation.agents}
    return await lifecycle.afinish(judgement_id, lease.worker_id, votes)


async def run_round(
    deliberation: Deliberation, round_number: int, lease: HeldLease, clients: calls.Clients
) -> None:
    """Ask every agent that has not decided this round yet, all at once, once the lease is
    made sure of (their first calls go out now; an answer asked again makes sure again:
    asking.Hooks). The first call that fails for good cancels the others and is raised."""
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
        earlier = deliberation.earlier_decisions(round_number)
        question = asking.question(
            prompts.AgentBrief(agent.name, agent.criteria),
            round_number,
            deliberation.judgement.content,
            earlier,
            deliberation.variants,
        )

        async def record_failure(entry: calls.AttemptRecord) -> None:
            await writes.astore_failed_attempt(agent, round_number, route, entry)

        async def record_rechecked(entry: calls.AttemptRecord) -> None:
            await writes.astore_rechecked_attempt(agent, round_number, route, entry)

        result = await asking.ask(
            question, clients, route, asking.Hooks(record_failure, record_rechecked, lease.confirm)
        )
        result = calibrated(result, deliberation.offsets.get(agent.pk))
        if question.variants & TURN_RULES:
            own = [deliberation.votes[(agent.pk, rnd)] for rnd in range(1, round_number)]
            panel = [each.criteria for each in deliberation.agents]
            at = deliberation.agents.index(agent)
            turn = Turn(own, at, panel, deliberation.judgement.content, question.variants)
            result = turn_founded(result, turn, agent.name)
    except LeaseLost:
        raise
    except MagiError as exc:
        raise AgentFailure(agent, round_number, str(exc)) from exc
    decision = await writes.astore_decision(agent, round_number, route, result, lease.worker_id)
    deliberation.votes[(agent.pk, round_number)] = decision
    await publish(
        deliberation.judgement.pk,
        Event.DECISION_STORED,
        agent_id=agent.pk,
        round=round_number,
        decision=decision.decision,
    )
    return decision


def calibrated(result: calls.VerdictResult, offset: float | None) -> calls.VerdictResult:
    """The answer with its decision read from its own P(approve) and the agent's learned
    offset (the CALIBRATED variant); unchanged when either is unknown. The reason stays
    the model's words, and the attempt its reply as sent, for the audit."""
    vote = calibration.calibrated_vote(result.p_approve, offset)
    if vote is None or vote == result.verdict.decision:
        return result
    log.info(
        "calibrated vote: %s with P(approve) %.3f and offset %.3f", vote, result.p_approve, offset
    )
    return voting(result, vote)


# The variants that can leave an agent's vote as it was when its answer turns it.
TURN_RULES = frozenset(
    {prompts.Variant.TURN_NEEDS_REASON, prompts.Variant.TURN_TO_REJECT_NAMES_CONTENT}
)


@dataclass(frozen=True)
class Turn:
    """What the turn rules read of an answer's agent: its decisions so far (`own`), its
    place `at` in the panel (the criteria in `panel`), the judged content, the variants."""

    own: list[RoundDecision]
    at: int
    panel: list[str]
    content: str
    variants: frozenset[prompts.Variant]

    def unfounded(self, verdict: prompts.AgentVerdict) -> bool:
        """Whether the answer turns the vote of the round before on nothing of its own
        (TURN_NEEDS_REASON: `own_criterion.unfounded_turn`) or to reject on a reason that
        names nothing the content says (TURN_TO_REJECT_NAMES_CONTENT:
        `own_criterion.bare_turn_to_reject`)."""
        earlier = [(d.decision, d.reason) for d in self.own]
        said, reason = verdict.decision, verdict.reason
        if prompts.Variant.TURN_NEEDS_REASON in self.variants and own_criterion.unfounded_turn(
            said, reason, earlier, self.at, self.panel
        ):
            return True
        return (
            prompts.Variant.TURN_TO_REJECT_NAMES_CONTENT in self.variants
            and own_criterion.bare_turn_to_reject(
                said, reason, earlier, self.content, self.panel[self.at]
            )
        )


def turn_founded(result: calls.VerdictResult, turn: Turn, name: str) -> calls.VerdictResult:
    """The answer, or, when it turns the agent's vote of the round before on what the
    variants' turn rules hold unfounded (`Turn.unfounded`), that earlier vote with its
    reason and `missing`. The attempt stays the reply as sent, for the audit. Plain data
    in: a call of the engine's own that takes no judgement or agent, so it is no stop on
    the path one judgement walks (docs/architecture.md)."""
    said = result.verdict
    if not turn.unfounded(said):
        return result
    kept = turn.own[-1]
    log.info("%s turned to %s unfounded: %s stands", name, said.decision, kept.decision)
    return voting(result, kept.decision, reason=kept.reason, missing=list(kept.missing))


def voting(result: calls.VerdictResult, vote: str, **kept: object) -> calls.VerdictResult:
    """The answer counted as `vote` (its criterion_met with it), with what else is `kept`."""
    update = {"decision": vote, "criterion_met": vote == rules.Vote.APPROVE, **kept}
    return dataclasses.replace(result, verdict=result.verdict.model_copy(update=update))
