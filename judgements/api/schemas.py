"""What the API answers, and the request bodies only it takes: pydantic models that
django-ninja checks every answer against and documents in /api/schema.json. A judgement,
its certificate and a saved panel are outcome/answers.py's (the MCP tools, the webhooks
and the exports send the same); a case and its agents are intake/schemas.py's (the
command line validates with them too).

Answers forbid unknown fields: a key a view sends that is not described here fails the
suite instead of reaching clients undocumented.
"""

from typing import Annotated, ClassVar

from pydantic import Field, StrictStr

from judgements.intake import schemas
from judgements.models import Decision
from judgements.outcome import webhooks
from judgements.outcome.answers import Answer, Judgement, Panel

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


class PanelList(Answer):
    panels: list[Panel]
