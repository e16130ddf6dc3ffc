"""What the live page shows, derived from the database alone.

The page and the websocket consumer both render from this, so a reload and a live
update cannot disagree. Nothing here is kept in memory between events.
"""

from dataclasses import dataclass
from functools import cached_property

from django.db.models import Q

from judgements.core import checks, confidence, hidden_text, rules
from judgements.core.confidence import probability_words
from judgements.llm.local.files import BUNDLED_MODEL_NAME
from judgements.models import (
    Agent,
    CheckKind,
    Judgement,
    RoundDecision,
    Status,
)
from judgements.models.checks import last_found
from judgements.outcome import answers


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

    @property
    def confidence(self) -> float | None:
        """The agent's probability of its own decision (its P(approve) for an approve,
        one minus it for a reject); None when the provider gave no log-probabilities."""
        return own_probability(self.decision.decision, self.decision.p_approve)

    @property
    def confidence_words(self) -> str:
        """ "87 %", or "unknown"."""
        return probability_words(self.confidence)


def own_probability(decision: str | None, p_approve: float | None) -> float | None:
    """How likely the model found the decision it gave, from its P(approve)."""
    return confidence.in_verdict(p_approve, decision)


@dataclass
class AgentBox:
    agent: Agent
    lines: list[RoundLine]
    state: str
    thinking: bool
    score_tenths: int
    # A later level's box on its story's first page (PanelView.later_levels): its ids its
    # own, apart from the first level's boxes beside it.
    id_prefix: str = ""

    @property
    def label(self) -> str:
        return BOX_LABELS[BoxState.THINKING if self.thinking else self.state]

    @property
    def score(self) -> float:
        return rules.tenths_as_float(self.score_tenths)

    @property
    def dom_id(self) -> str:
        return f"{self.id_prefix}agent-box-{self.agent.position}"


@dataclass(frozen=True)
class QueuedAhead:
    people: int
    runs: int


def queued_ahead(judgement: Judgement) -> QueuedAhead:
    """The queued judgements a worker starts before this one (people's first, then
    evaluation runs' in order: engine/runner.py), for the page to say why it waits."""
    idle = Judgement.objects.filter(status=Status.IDLE).exclude(pk=judgement.pk)
    earlier = idle.filter(
        Q(created_at__lt=judgement.created_at)
        | Q(created_at=judgement.created_at, pk__lt=judgement.pk)
    )
    people = idle.filter(evaluation_run__isnull=True)
    if judgement.evaluation_run_id is None:
        return QueuedAhead(people=earlier.filter(evaluation_run__isnull=True).count(), runs=0)
    runs = earlier.filter(evaluation_run__isnull=False)
    return QueuedAhead(people=people.count(), runs=runs.count())


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

    @cached_property
    def hidden_text(self) -> list[str]:
        """What the content says in characters a page cannot show and a model can read,
        each run as the text it stands for; the agents were sent none of it
        (core/hidden_text.py)."""
        return hidden_text.hidden_runs(self.judgement.content)

    @property
    def trust_words(self) -> str | None:
        """The mark in words, as every surface says it (the Markdown export)."""
        return answers.trust_words(self.judgement)

    @property
    def check_lines(self) -> list["CheckLine"]:
        """What the checks beside the vote found, and the verdict's confidence, in words."""
        return check_lines(self.judgement)

    @cached_property
    def levels(self) -> list[Judgement]:
        """Its escalation story's levels, in order (itself alone when none)."""
        return self.judgement.story()

    @cached_property
    def in_force_level(self) -> Judgement:
        """The level of its story whose verdict is in force (docs/escalation.md): the first
        that did not escalate (deciding, running or failed), else the last; itself when it
        is no story. The page's badge says the story's verdict and which level gave it;
        the rest of the page says this level's own decision."""
        if not self.judgement.escalated:
            return self.judgement
        later = [level for level in self.levels if level.level > self.judgement.level]
        return next((level for level in later if not level.escalated), self.levels[-1])

    @property
    def reviewed_at(self) -> Judgement | None:
        """For a level that escalated: the story's last level so far, where a person
        reviews the story if anyone does (a review of this one is refused, 409); updated
        live as later levels start."""
        return self.in_force_level if self.judgement.escalated else None

    @property
    def followed_levels(self) -> list[int]:
        """The story's other levels, whose events redraw this page (consumers.py): a
        level that escalated says the verdict in force and where the story is reviewed,
        which change as the later levels run."""
        if self.judgement.root_id is None and not self.judgement.escalated:
            return []
        return [level.pk for level in self.levels if level.pk != self.judgement.pk]

    @cached_property
    def later_levels(self) -> list["PanelView"]:
        """On a story's first judgement's page: each later level as its own triangle, in
        order (docs/escalation.md), rendered from the same partials; none on any other
        page, and no query for a judgement that never escalated."""
        if self.judgement.root_id is not None or not self.judgement.escalated:
            return []
        later = (
            Judgement.objects.filter(root=self.judgement)
            .select_related(*RELATED)
            .prefetch_related(*PREFETCH)
            .order_by("level")
        )
        return [build(level, id_prefix=f"level-{level.level}-") for level in later]

    @property
    def top(self) -> AgentBox:
        return self.boxes[0]

    @property
    def bottom(self) -> list[AgentBox]:
        return self.boxes[1:]


@dataclass(frozen=True)
class CheckLine:
    """One check's finding as the page lists it: what was checked, and what it found."""

    name: str
    words: str
    # A finding that puts the verdict in doubt (a second opinion against it, a screen that
    # found the content steering the model): the page says so in words, not colour alone.
    doubt: bool = False


def check_lines(judgement: Judgement) -> list[CheckLine]:
    """The verdict's confidence from the agents' answers and from the probes, and what each
    other check found (judgements/core/checks.py: the second opinion, the injection screen
    and any kind registered beside them), or that an asked one failed."""
    asked = set(judgement.checks_asked or ())
    lines = [
        CheckLine("Confidence from the answers", probability_words(judgement.answer_confidence))
    ]
    if CheckKind.PROBE in asked or judgement.probe_confidence is not None:
        lines.append(
            CheckLine("Confidence from the probes", probability_words(judgement.probe_confidence))
        )
    # Every other check (judgements/core/checks.py), as its class words what it found.
    done = sorted(judgement.checks.all(), key=lambda c: (c.kind, c.attempt, c.pk))
    for check in checks.registered():
        if check.source is not None or check.competitor:
            # A confidence source: its line is the confidence above. A competitor is the
            # evaluation report's, not a finding about this verdict.
            continue
        row = last_found(done, check.kind)
        shown = None if row is None else check.shown(row.found, judgement.decision)
        if shown is not None:
            lines.append(CheckLine(check.label, shown[0], doubt=shown[1]))
        elif check.kind in asked:
            lines.append(CheckLine(check.label, NOT_FOUND))
    return lines


# An asked check that found nothing: its call failed (the admin keeps the error).
NOT_FOUND = "no answer: the call failed, so nothing is known"


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


def build(judgement: Judgement, id_prefix: str = "") -> PanelView:
    """The page's view of `judgement`; `id_prefix` before its boxes' ids (a later level
    shown on its story's first page)."""
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
                id_prefix=id_prefix,
            )
        )
    queued = queued_ahead(judgement) if judgement.status == Status.IDLE else None
    return PanelView(
        judgement=judgement, boxes=boxes, current_round=current_round, queued_ahead=queued
    )


# What the page reads of a judgement besides its own row: the agents' decisions, the checks
# beside the vote, and the certificate its mark was read against.
PREFETCH = ("agents__decisions", "checks")
RELATED = ("certificate", "panel")


def load(judgement_id: int) -> PanelView:
    judgement = (
        Judgement.objects.select_related(*RELATED).prefetch_related(*PREFETCH).get(pk=judgement_id)
    )
    return build(judgement)
