"""A saved panel as every surface reports it: everything PUT /api/panels/{id}/ takes, by
names, built from its record (`Panel.from_record`) like the other answers
(outcome/answers.py)."""

from typing import Annotated

from django.contrib.auth.models import User
from pydantic import Field

from judgements import models
from judgements.outcome.answers import AgentSpec, Answer, ETag, Id
from judgements.panels import saved_panels

# What an agent is given, in the order a case lists it.


class Panel(Answer):
    """A saved panel as configuration: everything PUT /api/panels/{id}/ takes, by names."""

    id: Id
    name: str
    description: str
    example: bool = Field(description="Shipped with MAGI (no owner), usable by everyone.")
    owner: str | None = Field(description="Its owner's username; null: an example.")
    team: str | None = Field(description="The team it belongs to, by name.")
    hold_contested: bool | None = Field(
        description="Hold contested verdicts of judgements started from it; null: the "
        "deployment's MAGI_HOLD_CONTESTED."
    )
    run_checks: bool | None = Field(
        description="Run the second opinion and the injection screen beside the vote; "
        "null: the deployment's MAGI_SECOND_OPINION and MAGI_INJECTION_SCREEN."
    )
    prompt_variants: list[str] | None = Field(
        description="The prompt variants its judgements and runs use, as set; null: not set "
        "(the site's default)."
    )
    escalate_to: str | None = Field(
        description="The name of the panel its unkept verdicts go to before a person "
        "(docs/escalation.md); null: straight to a person."
    )
    notify_contested: bool = Field(description="Email its reviewers about contested verdicts.")
    reviewers: list[str] = Field(description="Usernames of the team's members who review it.")
    team_reviews: bool = Field(description="Every member of its team reviews it.")
    four_eyes: bool = Field(description="Nobody reviews a judgement they started.")
    agents: Annotated[list[AgentSpec], Field(min_length=3, max_length=3)]
    certificates: list[Id] = Field(
        description="Its certificates not voided: changing an agent's model or criteria, or "
        "the prompt variants, voids them."
    )
    version: Id
    etag: ETag

    @classmethod
    def from_record(cls, panel: models.Panel) -> "Panel":
        """A panel as GET /api/panels/ lists it (prefetch its reviewers and certificates
        for a list)."""
        agents = panel.stored_agents()
        return cls.model_validate(
            panel.config_state()
            | {
                "id": panel.pk,
                "example": panel.owner_id is None,
                "agents": agents,
                "certificates": sorted(
                    c.pk for c in panel.certificates.all() if c.voided_at is None
                ),
                "version": panel.version,
                "etag": panel.etag(),
            }
        )


def listing(user: User | None) -> list[Panel]:
    """The panels a user may use, as GET /api/panels/ lists them."""
    panels = (
        saved_panels.visible(user)
        .select_related("team", "escalate_to")
        .prefetch_related("reviewers", "certificates")
    )
    return [Panel.from_record(panel) for panel in panels]
