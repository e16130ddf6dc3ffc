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


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LevelPanel(Answer):
    id: int
    name: str


class Level(Answer):
    """One level of an escalation story (docs/escalation.md): an ordinary judgement of
    its own panel on the same content."""

    level: Annotated[int, Field(ge=1)]
    judgement: Annotated[int, Field(ge=1)]
    panel: LevelPanel | None
    panel_status: Status = Field(description="What this level's panel decided.")
    trust: Literal["contested", "not_contested", "unmeasured"] | None
    contest_reasons: list[str]
    escalated: bool = Field(
        description="This level did not keep its verdict: the next level's is in force."
    )
    receipt: SignedReceipt | None = Field(description="This level's own signed receipt.")

    @classmethod
    def from_record(cls, level: models.Judgement) -> "Level":
        return cls(
            level=level.level,
            judgement=level.pk,
            panel=None
            if level.panel is None
            else LevelPanel(id=level.panel.pk, name=level.panel.name),
            panel_status=level.status,
            trust=level.trust,
            contest_reasons=list(level.contest_reasons),
            escalated=level.escalated,
            receipt=receipt_of(level),
        )


class Escalation(Answer):
    """Its escalation story (docs/escalation.md), null when its verdict never went to
    another panel: every level, in order, and which one's verdict is in force. "status"
    is already that verdict (fail-closed while a level runs)."""

    level: Annotated[int, Field(ge=1)] = Field(description="This judgement's own level.")
    root: Annotated[int, Field(ge=1)] = Field(
        description="The story's first judgement, the one submitted."
    )
    decided_by: Annotated[int, Field(ge=1)] | None = Field(
        description="The level whose verdict is in force: the first that kept its verdict, "
        "or the last, whose verdict waits for a person (status held) or a person decided; "
        "null while a level runs or after an error."
    )
    levels: list[Level]

    @classmethod
    def of(cls, judgement: models.Judgement) -> "Escalation | None":
        """None for a judgement that is no story (it never escalated and is no level)."""
        if judgement.root_id is None and not judgement.escalated:
            return None
        levels = story_levels(judgement)
        in_force = judgement.in_force()
        decided = in_force.status in (Status.APPROVED, Status.REJECTED) and not in_force.escalated
        return cls(
            level=judgement.level,
            root=levels[0].pk,
            decided_by=in_force.level if decided else None,
            levels=[Level.from_record(level) for level in levels],
        )


def story_levels(judgement: models.Judgement) -> list[models.Judgement]:
    """Every level of the judgement's story, loaded as its answer reads them: the one
    place the answers, webhooks, receipts and exports list a story's levels."""
    ids = [level.pk for level in judgement.story()]
    loaded = models.Judgement.objects.with_results().in_bulk(ids)
    return [loaded[pk] for pk in ids]


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
