"""What the live page shows, derived from the database alone.

The page and the websocket consumer both render from this, so a reload and a live
update cannot disagree. Nothing here is kept in memory between events.
"""

from dataclasses import dataclass

from judgements.core import rules
from judgements.llm.local.files import BUNDLED_MODEL_NAME
from judgements.models import Agent, Judgement, QueuedAhead, RoundDecision, Status


class BoxState:
    """The box's colour. A call in flight is shown on top of it (AgentBox.thinking), so a
    box that is already fixed green stays green while it answers round 3."""

    WAITING = "waiting"  # queued, not started
    THINKING = "thinking"  # first call in flight, no vote to colour by yet
    PENDING = "pending"  # open: the next round decides
    APPROVE = "approve"  # fixed approve
    REJECT = "reject"  # fixed reject
    ERROR = "error"  # this agent's call failed


BOX_LABELS = {
    BoxState.WAITING: "WAITING",
    BoxState.THINKING: "THINKING",
    # Not "pending": beside "R1 Approve" that read as if the vote were not in yet. Open: the
    # next round can still change the decision.
    BoxState.PENDING: "OPEN",
    BoxState.APPROVE: "APPROVE",
    BoxState.REJECT: "REJECT",
    BoxState.ERROR: "ERROR",
}

OUTCOME_STATES = {
    rules.Outcome.APPROVE: BoxState.APPROVE,
    rules.Outcome.REJECT: BoxState.REJECT,
    rules.Outcome.OPEN: BoxState.PENDING,
}


def change_words(change: rules.VoteChange) -> str:
    """A later round's vote against the round before, in words (the page never says it in
    colour alone): changed or kept, and whether that is the vote both other agents gave."""
    verb = "changed" if change.changed else "kept"
    if change.with_majority is None:
        return f"{verb}, others split"
    return f"{verb}, {'with' if change.with_majority else 'against'} the majority"


@dataclass
class RoundLine:
    """One round of an agent's history: its decision and how it relates to the round
    before."""

    decision: RoundDecision
    change: rules.VoteChange

    @property
    def change_words(self) -> str:
        """Empty in round 1: there is nothing to compare with."""
        return "" if self.decision.round == 1 else change_words(self.change)


@dataclass
class AgentBox:
    agent: Agent
    lines: list[RoundLine]
    state: str
    thinking: bool
    score_tenths: int

    @property
    def label(self) -> str:
        return BOX_LABELS[BoxState.THINKING if self.thinking else self.state]

    @property
    def score(self) -> float:
        return rules.tenths_as_float(self.score_tenths)

    @property
    def dom_id(self) -> str:
        return f"agent-box-{self.agent.position}"


@dataclass
class PanelView:
    judgement: Judgement
    boxes: list[AgentBox]
    current_round: int
    # While queued: what the judgement waits behind.
    queued_ahead: QueuedAhead | None = None

    @property
    def bundled_model(self) -> bool:
        """An agent runs on the bundled demonstration model: the page says what it is."""
        return any(box.agent.model == BUNDLED_MODEL_NAME for box in self.boxes)

    @property
    def top(self) -> AgentBox:
        return self.boxes[0]

    @property
    def bottom(self) -> list[AgentBox]:
        return self.boxes[1:]


def is_thinking(judgement: Judgement, votes: list[str], current_round: int) -> bool:
    """Rounds run in lockstep, so while judging every agent without a vote for the round
    under way has its call in flight."""
    return judgement.status == Status.JUDGING and len(votes) < current_round


def box_state(judgement: Judgement, agent: Agent, votes: list[str], thinking: bool) -> str:
    if judgement.status == Status.IDLE:
        return BoxState.WAITING
    if judgement.status == Status.ERROR and judgement.error_agent_id == agent.pk:
        return BoxState.ERROR
    if not votes:
        return BoxState.THINKING if thinking else BoxState.PENDING
    return OUTCOME_STATES[rules.agent_outcome(votes)]


def build(judgement: Judgement) -> PanelView:
    agents = list(judgement.agents.all())
    decisions = {agent.pk: agent.ordered_decisions() for agent in agents}
    current_round = rules.round_under_way([len(d) for d in decisions.values()])
    changes = judgement.vote_changes()
    boxes = []
    for agent in agents:
        votes = [d.decision for d in decisions[agent.pk]]
        thinking = is_thinking(judgement, votes, current_round)
        boxes.append(
            AgentBox(
                agent=agent,
                lines=[RoundLine(d, changes[agent.pk, d.round]) for d in decisions[agent.pk]],
                state=box_state(judgement, agent, votes, thinking),
                thinking=thinking,
                score_tenths=rules.score_tenths(votes),
            )
        )
    queued = judgement.queued_ahead() if judgement.status == Status.IDLE else None
    return PanelView(
        judgement=judgement, boxes=boxes, current_round=current_round, queued_ahead=queued
    )


def load(judgement_id: int) -> PanelView:
    judgement = Judgement.objects.prefetch_related("agents__decisions").get(pk=judgement_id)
    return build(judgement)
