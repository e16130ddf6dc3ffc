"""An escalation story as every surface reports it (docs/escalation.md): its levels,
each an ordinary judgement of its own panel, and which one's verdict is in force
(`Escalation`, in a judgement's answer); and a cascade's certificate, its levels' rules
and report (`Cascade`, in a certificate's answer). Pydantic models like the others
(outcome/answers.py), built from their records; `story_levels` is the one place a story's
levels are listed for the answers, the webhooks and the receipts."""

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from judgements import models
from judgements.core import cascade
from judgements.models import Status
from judgements.outcome.receipt_answers import SignedReceipt, receipt_of
from judgements.outcome.verdict_answers import AgentResult, agents_of, trust_words


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LevelPanel(Answer):
    id: int
    name: str


class Level(Answer):
    """One level of an escalation story (docs/escalation.md): an ordinary judgement of
    its own panel on the same content, as that level decided it, whatever the story's
    verdict in force."""

    level: Annotated[int, Field(ge=1)]
    judgement: Annotated[int, Field(ge=1)]
    panel: LevelPanel | None
    panel_status: Status = Field(description="What this level's panel decided.")
    contested: bool | None = Field(description="This level's own mark: contested or not.")
    trust: Literal["contested", "not_contested", "unmeasured"] | None
    trust_words: str | None = Field(description="This level's own mark in words.")
    contest_reasons: list[str]
    escalated: bool = Field(
        description="This level did not keep its verdict: the next level's is in force."
    )
    in_force: bool = Field(
        description="The story's top-level fields describe this level: the one deciding, "
        "running, or failed."
    )
    error: str | None
    agents: list[AgentResult] = Field(description="This level's own agents and rounds.")
    receipt: SignedReceipt | None = Field(
        description="This level's own signed receipt: the story's top-level receipt when "
        "this level is in force."
    )

    @classmethod
    def from_record(cls, level: models.Judgement, in_force: bool) -> "Level":
        """`level` loaded with Judgement.objects.with_results() (story_levels)."""
        return cls(
            level=level.level,
            judgement=level.pk,
            panel=None
            if level.panel is None
            else LevelPanel(id=level.panel.pk, name=level.panel.name),
            panel_status=level.status,
            contested=level.contested,
            trust=level.trust,
            trust_words=trust_words(level),
            contest_reasons=list(level.contest_reasons),
            escalated=level.escalated,
            in_force=in_force,
            error=level.error_message or None,
            agents=agents_of(level),
            receipt=receipt_of(level),
        )


class Escalation(Answer):
    """Its escalation story (docs/escalation.md): every level so far, in order, each as
    it decided, and which one's verdict is in force; null for a judgement of a panel that
    does not escalate. The answer's top-level fields (status, mark, agents, receipt)
    are the level in force's: "status" is the story's verdict (fail-closed while a level
    runs)."""

    level: Annotated[int, Field(ge=1)] = Field(description="This judgement's own level.")
    root: Annotated[int, Field(ge=1)] = Field(
        description="The story's first judgement, the one submitted."
    )
    in_force: Annotated[int, Field(ge=1)] = Field(
        description="The level the answer's top-level fields describe: the one deciding, "
        "running, or failed."
    )
    decided_by: Annotated[int, Field(ge=1)] | None = Field(
        description="The level whose verdict is in force: the first that kept its verdict, "
        "or the last, whose verdict waits for a person (status held) or a person decided; "
        "null while a level runs or after an error."
    )
    levels: list[Level]

    @classmethod
    def of(cls, judgement: models.Judgement, levels: list[models.Judgement]) -> "Escalation | None":
        """None for a judgement that is no story (`levels`: story_levels(judgement),
        empty for one that is none)."""
        if not levels:
            return None
        in_force = level_in_force(judgement, levels)
        decided = in_force.status in (Status.APPROVED, Status.REJECTED) and not in_force.escalated
        return cls(
            level=judgement.level,
            root=levels[0].pk,
            in_force=in_force.level,
            decided_by=in_force.level if decided else None,
            levels=[Level.from_record(level, level.pk == in_force.pk) for level in levels],
        )


def is_story(judgement: models.Judgement) -> bool:
    """Whether its answer tells a story: it is a level of one (it escalated, or continues
    one), or it is the first level of a panel that escalates, whose story may go on (an
    evaluation run's judgement never escalates)."""
    if judgement.root_id is not None or judgement.escalated:
        return True
    panel = judgement.panel
    return (
        judgement.evaluation_run_id is None
        and panel is not None
        and panel.escalate_to_id is not None
    )


def story_levels(judgement: models.Judgement) -> list[models.Judgement]:
    """Every level of the judgement's story, loaded as its answer reads them (none when
    it is no story, is_story): the one place the answers, webhooks, receipts and exports
    list a story's levels."""
    if not is_story(judgement):
        return []
    ids = [level.pk for level in judgement.story()]
    loaded = models.Judgement.objects.with_results().in_bulk(ids)
    return [loaded[pk] for pk in ids]


def level_in_force(judgement: models.Judgement, levels: list[models.Judgement]) -> models.Judgement:
    """The level of `levels` (story_levels) whose verdict is in force (Judgement.in_force),
    as loaded there; `judgement` itself when it is no story."""
    wanted = judgement.in_force().pk
    return next((level for level in levels if level.pk == wanted), judgement)


class CascadePanel(Answer):
    level: Annotated[int, Field(ge=1)]
    panel: int
    name: str
    fingerprint: str
    rule: cascade.RuleFields | None = Field(
        description="Its verdicts kept by; null: it keeps none."
    )
    runs: list[int]


class Cascade(Answer):
    """A cascade's certificate (docs/escalation.md): each level's rule, and the report on
    the held-out cases: per level the share kept, the accuracy of what it kept with its
    interval, its cost, and what is left for people; beside the strongest level alone."""

    panels: list[CascadePanel]
    report: cascade.CascadeReport

    @classmethod
    def of(cls, certificate: models.Certificate) -> "Cascade | None":
        """None for a certificate of one panel alone."""
        return None if certificate.levels is None else cls.model_validate(certificate.levels)
