"""What the configuration API takes and answers (panels, budgets, teams, people): pydantic
models django-ninja checks and documents. A panel as an answer is outcome/answers.py's
Panel, the one GET /api/panels/ lists; a write's answer adds what the change voided.

Request bodies are strict (no "1" for 1, no unknown field): a typo in a configuration
file never passes as a default.
"""

from typing import Annotated, ClassVar, Literal

from django.contrib.auth.models import User
from pydantic import BeforeValidator, Field, StrictBool, StrictInt, StrictStr

from judgements import models
from judgements.api.slack_schemas import SlackWrite, TeamSlack
from judgements.configuration.budget_config import BudgetFields
from judgements.configuration.panel_fields import PanelFields
from judgements.configuration.saving import DESCRIPTION_MAX_CHARS, NAME_MAX_CHARS
from judgements.configuration.team_config import TeamFields
from judgements.intake import schemas
from judgements.models.panels import StoredAgent
from judgements.outcome.answers import Answer, ETag, Id
from judgements.outcome.panel_answers import Panel
from judgements.panels import saved_panels

Username = Annotated[StrictStr, Field(min_length=1, max_length=150)]
TeamName = Annotated[StrictStr, Field(min_length=1, max_length=100)]


class PanelWrite(schemas.Strict):
    """A whole panel, as POST creates it and PUT makes it: a field left out takes its
    default, in PUT as in POST."""

    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"name", "agents", ...}.')

    name: Annotated[
        str, schemas.TypedText(lambda: NAME_MAX_CHARS, "Unique per owner and within its team.")
    ]
    description: Annotated[
        str, schemas.TypedText(lambda: DESCRIPTION_MAX_CHARS, "What it judges.", required=False)
    ] = ""
    agents: schemas.Agents
    team: TeamName | None = Field(
        default=None,
        description="The team it belongs to, one you are in (staff: any). Left out: the "
        "team of the token you call with, if it has one.",
    )
    hold_contested: StrictBool | None = Field(
        default=None, description="Hold contested verdicts; null: the deployment decides."
    )
    run_checks: StrictBool | None = Field(
        default=None,
        description="Run the second opinion and injection screen; null: the deployment decides.",
    )
    prompt_variants: Annotated[list[StrictStr], Field(max_length=10)] | None = Field(
        default=None,
        description="The prompt variants its judgements and runs use (docs/panel-quality.md): "
        "decision_first, named_peers, decisions_only, quote, calibrated; not named_peers with "
        "decisions_only. null: the site's default; []: no variant, whatever the default becomes.",
    )
    escalate_to: (
        Annotated[StrictStr | StrictInt, schemas.reference(schemas.NOT_A_REFERENCE)] | None
    ) = Field(
        default=None,
        description="The saved panel (id or name) its unkept verdicts (contested, or "
        "outside its certificate) go to before a person: one of its team's panels or an "
        "example (docs/escalation.md). null: straight to a person.",
    )
    notify_contested: StrictBool = Field(
        default=False, description="Email its reviewers about contested verdicts too."
    )
    reviewers: Annotated[list[Username], Field(max_length=1000)] = Field(
        default=[], description="Usernames of members of its team who review it."
    )
    team_reviews: StrictBool = Field(default=False, description="Every team member reviews it.")
    four_eyes: StrictBool = Field(
        default=False, description="Nobody reviews a judgement they started."
    )
    example: StrictBool = Field(
        default=False,
        description="Staff: an example panel, with no owner and no team, everyone's to use. "
        "An example stays one; every write of it says true.",
    )

    def fields(self) -> PanelFields:
        """The panel as sent, for configuration/panel_config.py: a setting left out is its
        default there as here, but for the team (left out: the caller's token's team)."""
        sent = PanelFields(
            name=self.name,
            description=self.description,
            agents=[
                StoredAgent(name=agent.name, model=agent.model, criteria=agent.criteria)
                for agent in self.agents
            ],
            hold_contested=self.hold_contested,
            run_checks=self.run_checks,
            prompt_variants=self.prompt_variants,
            escalate_to=self.escalate_to,
            notify_contested=self.notify_contested,
            reviewers=self.reviewers,
            team_reviews=self.team_reviews,
            four_eyes=self.four_eyes,
            example=self.example,
        )
        if "team" in self.model_fields_set:
            sent["team"] = self.team
        return sent


class PanelChange(Panel):
    """The panel as it now stands, and what the change voided."""

    voided_certificates: list[Id] = Field(
        description="The certificates this change voided: an agent's model or criteria, or "
        "the panel's prompt variants, changed since they were measured. Empty when nothing "
        "was voided."
    )


class Stale(Answer):
    """412: the object changed since the If-Match was read; nothing was changed."""

    error: str
    etag: str | None = Field(description="Its ETag now (null: it is gone).")


class BudgetWrite(schemas.Strict):
    """A whole budget: exactly one of team, user and panel; exactly one limit."""

    WHOLE: ClassVar = (
        "body",
        'Must be a JSON object: {"team" | "user" | "panel", "period", "limit_usd" | '
        '"limit_tokens"}.',
    )

    team: TeamName | None = Field(default=None, description="A team's name.")
    user: Username | None = Field(default=None, description="A username.")
    panel: (
        Annotated[StrictStr | StrictInt, schemas.reference(saved_panels.NOT_A_REFERENCE)] | None
    ) = Field(default=None, description="A saved panel's id or name.")
    panel_team: TeamName | None = Field(
        default=None,
        description="With `panel` given by name: the team whose panel it is (two teams may "
        "each have a panel of that name). Not kept: the budget is the panel's.",
    )
    period: Literal["day", "month"] = Field(description="A UTC day or month.")
    limit_usd: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = Field(
        default=None, description="At most this many USD (4 decimals, 12 digits)."
    )
    limit_tokens: (
        Annotated[StrictInt, Field(ge=0, le=2**63 - 1), BeforeValidator(schemas.whole_number)]
        | None
    ) = Field(default=None, description="At most this many tokens, prompt and completion.")

    def fields(self) -> BudgetFields:
        return BudgetFields(
            team=self.team,
            user=self.user,
            panel=self.panel,
            panel_team=self.panel_team,
            period=self.period,
            limit_usd=self.limit_usd,
            limit_tokens=self.limit_tokens,
        )


# --- teams and people ------------------------------------------------------------------


class TeamWrite(schemas.Strict):
    """A team's name and its members, all of them."""

    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"name", "members", "slack"}.')

    name: TeamName
    members: Annotated[list[Username], Field(max_length=10_000)] = Field(
        default=[], description="Usernames: every member, none left out."
    )
    slack: SlackWrite | None = Field(
        default=None,
        description="Its Slack connection, set as PUT /api/teams/{id}/slack sets it (`magi "
        "apply`'s team.yaml `slack:`); left out or null: left as it is.",
    )

    def fields(self) -> TeamFields:
        return TeamFields(name=self.name, members=self.members)


class Team(Answer):
    id: Id
    name: str
    members: list[str] = Field(description="Usernames, sorted.")
    slack: TeamSlack | None = Field(description="Its Slack connection; null: none.")
    version: Id
    etag: ETag

    @classmethod
    def from_record(cls, team: models.Team) -> "Team":
        return cls(
            id=team.pk,
            name=team.name,
            members=team.member_names(),
            slack=TeamSlack.of(models.SlackConnection.objects.filter(team=team).first()),
            version=team.version,
            etag=team.etag(),
        )


class TeamList(Answer):
    teams: list[Team]


class UserCreate(schemas.Strict):
    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"username", "email", "is_staff"}.')

    username: Username
    email: Annotated[StrictStr, Field(min_length=3, max_length=254)] = Field(
        description="Where MAGI tells them what waits for their review."
    )
    is_staff: StrictBool = Field(default=False, description="Sees and changes everything.")


class UserAnswer(Answer):
    id: Id
    username: str
    email: str
    is_staff: bool
    is_active: bool
    teams: list[str] = Field(description="The teams they are in, by name.")

    @classmethod
    def from_record(cls, user: User) -> "UserAnswer":
        return cls(
            id=user.pk,
            username=user.get_username(),
            email=user.email,
            is_staff=user.is_staff,
            is_active=user.is_active,
            teams=sorted(team.name for team in user.teams.all()),
        )


class UserList(Answer):
    users: list[UserAnswer]


class TokenCreate(schemas.Strict):
    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"user", "name", "team"}.')

    user: Username = Field(description="Whose token: a bot's username, say.")
    name: Annotated[StrictStr, Field(min_length=1, max_length=100)] = Field(
        default="api", description="What it is for."
    )
    team: TeamName | None = Field(
        default=None, description="The team whose token it is: what it starts is the team's."
    )


class TokenIssued(Answer):
    id: Id = Field(description="What `manage.py team assign --token` takes.")
    name: str
    prefix: str
    user: str
    team: str | None
    key: str = Field(
        description="The token itself: shown this once, never stored. Empty in a dry run, "
        "which issues nothing."
    )


# --- a batch -----------------------------------------------------------------------------


class BatchOperation(schemas.Strict):
    method: Literal["POST", "PUT", "DELETE"]
    path: Annotated[StrictStr, Field(min_length=1, max_length=2000)] = Field(
        description='As the request alone would be sent: "/api/panels/12/", '
        '"/api/suites/?name=Smoke&team=Payments".'
    )
    if_match: Annotated[StrictStr, Field(min_length=1)] | None = Field(
        default=None, description="PUT and DELETE: the ETag the change was made against."
    )
    # Validated by the operation it is sent to (resources.Resource.from_batch), as the
    # request alone would be.
    body: object = Field(
        default=None,
        description="The request's body: a JSON object, or a suite's JSONL as a string.",
    )


BATCH_MAX_OPERATIONS = 500
PartKey = Annotated[StrictStr, Field(min_length=1, max_length=43)]


class BatchRequest(schemas.Strict):
    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"operations": [...], "parts": [...]}.')

    operations: Annotated[
        list[BatchOperation], Field(min_length=1, max_length=BATCH_MAX_OPERATIONS)
    ]
    parts: Annotated[list[PartKey], Field(max_length=1000)] = Field(
        default=[],
        description="Parts sent ahead (POST /api/batch/parts/), whose operations come first, "
        "in this order: a batch larger than one request body, still one transaction. The "
        "batch consumes them, whatever its outcome.",
    )


class BatchPartWrite(schemas.Strict):
    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"operations": [...]}.')

    operations: Annotated[
        list[BatchOperation], Field(min_length=1, max_length=BATCH_MAX_OPERATIONS)
    ]


class BatchPartMade(Answer):
    part: str = Field(description="What the batch names in `parts`.")
    operations: Annotated[int, Field(ge=1)]


class BatchLimits(Answer):
    """What one request of a batch may hold: a larger batch is sent as parts."""

    max_body_bytes: Annotated[int, Field(ge=1)] = Field(
        description="The largest request body (MAGI_MAX_BODY_BYTES)."
    )
    max_operations: Annotated[int, Field(ge=1)] = Field(
        description="The most operations one request (a batch or a part) holds."
    )


class BatchItem(Answer):
    status: Annotated[int, Field(ge=200, le=299)]
    # Each kind's own answer (its Resource's Answer), as JSON.
    body: dict[str, object] | None = Field(description="What the request alone is answered.")
    etag: str | None


class BatchResult(Answer):
    results: list[BatchItem]


class BatchFailure(Answer):
    """The first refusal, as the request alone would get it, and which it was; nothing
    of the batch was changed."""

    error: str
    operation: Annotated[int, Field(ge=0)] | None = Field(
        default=None,
        description="Its index in operations (absent: the batch's body itself is refused).",
        json_schema_extra=schemas.not_documented_default,
    )
    errors: dict[str, list[str]] | None = Field(
        default=None, json_schema_extra=schemas.not_documented_default
    )
    etag: str | None = Field(default=None, json_schema_extra=schemas.not_documented_default)
