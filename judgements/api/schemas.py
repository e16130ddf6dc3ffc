"""What the API answers, and the request bodies only it takes: pydantic models that
django-ninja checks every answer against and documents in /api/schema.json. A case and
its agents are intake/schemas.py's (the command line validates with them too).

Answers forbid unknown fields: a key a view sends that is not described here fails the
suite instead of reaching clients undocumented.
"""

from typing import Annotated, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictStr,
)

from judgements.core import rules
from judgements.intake import schemas
from judgements.models import Decision, Status
from judgements.outcome import webhooks

Count = Annotated[int, Field(ge=0)]
Ratio = Annotated[float | None, Field(ge=0, le=1)]
Id = Annotated[int, Field(ge=1)]
# The models' own choices: documented as their enums, sent as their values.
DecisionName = Decision
StatusName = Status
# As the models write them (datetime.isoformat), passed through unchanged.
DateTime = Annotated[str, Field(json_schema_extra={"format": "date-time"})]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentSpec(Answer):
    """An agent as stored: what it was given, whether or not its model is still served."""

    name: str
    model: str
    criteria: str


# --- errors ------------------------------------------------------------------------------


class Error(Answer):
    error: str
    retry_after: Annotated[int, Field(ge=1)] | None = Field(
        default=None, json_schema_extra=schemas.not_documented_default
    )


class Invalid(Answer):
    """Invalid input: `errors` names each field path (`agents[1].model`), as the command
    line does. 400: the body breaks this document's schema; 422: a rule the schema cannot
    express (only invisible characters, two agents with one name, an unknown panel)."""

    error: str
    errors: Annotated[dict[str, Annotated[list[str], Field(min_length=1)]], Field(min_length=1)]


# --- judgements --------------------------------------------------------------------------


class Review(Answer):
    by: str = Field(description="The username of the reviewer.")
    at: DateTime
    reason: str
    decision: DecisionName


class Round(Answer):
    round: Annotated[int, Field(ge=1, le=rules.ROUNDS)]
    decision: DecisionName
    reason: str
    changed: bool = Field(
        description="The decision differs from the agent's own in the round before "
        "(false in round 1)."
    )
    with_majority: bool | None = Field(
        description="Whether the decision is the one both other agents gave in the round "
        "before; null in round 1 and when those two disagreed."
    )


class AgentResult(Answer):
    name: str
    model: str
    final_decision: DecisionName | None
    score: Annotated[float, Field(ge=0, le=1)]
    rounds: Annotated[list[Round], Field(max_length=rules.ROUNDS)]


class PanelLink(Answer):
    id: int
    name: str


class Judgement(Answer):
    """Fail-closed: proceed only when "status" is "approved". Every other value (rejected,
    held, error, idle, judging, or one this document does not list) and every error answer
    mean do not proceed."""

    id: Id
    title: str
    status: StatusName = Field(
        description="The verdict in force: the override's; else held while a contested "
        "verdict waits for a person; else the panel's."
    )
    panel_status: StatusName = Field(description="What the panel decided.")
    contested: bool | None = Field(
        description="Whether a person should look at the panel's verdict before anyone "
        "relies on it (null until decided); contest_reasons says why."
    )
    contest_reasons: list[str]
    hold_contested: bool
    override: Review | None
    confirmation: Review | None = Field(
        description="A reviewer kept the panel's verdict: who, when, why."
    )
    error: str | None
    panel: PanelLink | None = Field(
        description="The saved panel it started from (null: agents given directly). The "
        "agents below are the ones that ran, whatever the panel holds now."
    )
    agents: list[AgentResult]


class JudgementList(Answer):
    judgements: list[Judgement]


class WebhookEvent(Judgement):
    """The judgement as GET /api/judgements/{id}/ answers it, plus "event". Fail-closed
    here too: proceed only on "status": "approved"."""

    event: str = Field(json_schema_extra={"enum": list(webhooks.EVENTS)})


REVIEW_BODY = ("body", 'Must be a JSON object: {"decision", "reason"}.')


class OverrideRequest(schemas.Strict):
    WHOLE: ClassVar = REVIEW_BODY

    # Not strict: the JSON string "approve" is the choice.
    decision: Annotated[Decision, Field(strict=False)]
    reason: Annotated[StrictStr, Field(min_length=1)]


class ConfirmRequest(schemas.Strict):
    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"reason"}.')

    reason: Annotated[StrictStr, Field(min_length=1)]


# --- panels ------------------------------------------------------------------------------


class Panel(Answer):
    id: Id
    name: str
    description: str
    example: bool = Field(description="Shipped with MAGI (no owner), usable by everyone.")
    hold_contested: bool | None = Field(
        description="Hold contested verdicts of judgements started from it; null: the "
        "deployment's MAGI_HOLD_CONTESTED."
    )
    agents: Annotated[list[AgentSpec], Field(min_length=3, max_length=3)]


class PanelList(Answer):
    panels: list[Panel]
