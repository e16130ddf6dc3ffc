"""What the API answers, and the request bodies only it takes: pydantic models that
django-ninja checks every answer against and documents in /api/schema.json. A judgement,
its certificate and a saved panel are outcome/answers.py's (the MCP tools, the webhooks
and the exports send the same); a case and its agents are intake/schemas.py's (the
command line validates with them too).

Answers forbid unknown fields: a key a view sends that is not described here fails the
suite instead of reaching clients undocumented.
"""

from typing import Annotated, ClassVar, Literal

from pydantic import Field, StrictStr

from judgements.intake import schemas
from judgements.models import Decision
from judgements.outcome import webhooks
from judgements.outcome.answers import Answer, ETag

# The API's answer for a judgement is outcome's, re-exported (`schemas.Judgement`).
from judgements.outcome.answers import Judgement as Judgement
from judgements.outcome.panel_answers import Panel
from judgements.outcome.receipt_answers import SignedReceipt
from judgements.spending import budgets

# --- errors ------------------------------------------------------------------------------


class Error(Answer):
    error: str
    retry_after: Annotated[int, Field(ge=1)] | None = Field(
        default=None, json_schema_extra=schemas.not_documented_default
    )


class OverBudget(Answer):
    """402: a spending limit (docs/teams.md) cannot cover this start until it resets."""

    error: str = Field(description="Which budget, and when it resets, in words.")
    budget: Annotated[int, Field(ge=1)] = Field(description="The budget's id.")
    resets_at: str = Field(json_schema_extra={"format": "date-time"})
    retry_after: Annotated[int, Field(ge=1)] = Field(description="Seconds until it resets.")


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


class ModelList(Answer):
    """What an agent's `model` may name: every model this deployment can reach."""

    models: list[str] = Field(
        description="The models of every configured provider (a discovering one's as it last "
        "listed them) and the local ones, in the order a panel's form offers them."
    )


class Budget(Answer):
    """A spending limit and what it has left this period (docs/teams.md)."""

    id: Annotated[int, Field(ge=1)]
    applies_to: str = Field(description='"the team …", "the user …" or "the panel …".')
    team: str | None = Field(description="The team it limits, by name.")
    user: str | None = Field(description="The user it limits, by username.")
    panel: Annotated[int, Field(ge=1)] | None = Field(description="The panel it limits: its id.")
    panel_name: str | None = Field(description="The panel it limits: its name.")
    period: str = Field(description='"day" or "month", in UTC.')
    limit_usd: float | None
    limit_tokens: Annotated[int, Field(ge=0)] | None
    spent_tokens: Annotated[int, Field(ge=0)]
    spent_usd: Annotated[float, Field(ge=0)] | None = Field(
        description="null when a model used has no price in MAGI_MODEL_PRICES."
    )
    left_tokens: Annotated[int, Field(ge=0)] | None
    left_usd: Annotated[float, Field(ge=0)] | None
    resets_at: str = Field(json_schema_extra={"format": "date-time"})
    version: Annotated[int, Field(ge=1)]
    etag: ETag

    @classmethod
    def from_state(cls, state: "budgets.State") -> "Budget":
        budget = state.budget
        scope = budget.config_state()
        return cls(
            id=budget.pk,
            applies_to=budget.scope_words(),
            team=scope["team"],
            user=scope["user"],
            panel=budget.panel_id,
            panel_name=budget.panel.name if budget.panel_id is not None and budget.panel else None,
            period=budget.period,
            limit_usd=None if budget.limit_usd is None else float(budget.limit_usd),
            limit_tokens=budget.limit_tokens,
            spent_tokens=state.spent.tokens,
            spent_usd=state.spent.usd,
            left_tokens=state.left_tokens,
            left_usd=state.left_usd,
            resets_at=state.resets_at.isoformat(),
            version=budget.version,
            etag=budget.etag(),
        )


class BudgetList(Answer):
    budgets: list[Budget]


# --- evidence ----------------------------------------------------------------------------


class EvidencePack(Answer):
    """One judgement's evidence pack (docs/evidence.md describes every field): check it
    offline with `magi verify PACK --keys KEYS`."""

    # The parts audit/evidence.py builds are passed through as it builds them, documented
    # as JSON objects: docs/evidence.md says what each holds, `magi verify` checks them.

    format: Literal["magi-evidence/2"]
    judgement: int
    title: str
    content: str
    created_at: str = Field(json_schema_extra={"format": "date-time"})
    status: str = Field(description="What the panel decided.")
    verdict: str = Field(
        description="The verdict in force: its story's, which a later level gave when this "
        "one escalated."
    )
    escalated: bool = Field(
        description="This level did not keep its verdict: the story's next level decides."
    )
    mark: dict[str, object] = Field(description="contested, trust, contest_reasons.")
    certificate: dict[str, object] | None = Field(
        description="The certificate the mark was read against."
    )
    agents: list[dict[str, object]] = Field(
        description="Each agent: its criteria, decisions, and every attempt (prompt and reply)."
    )
    checks: list[dict[str, object]] = Field(description="The calls beside the vote, each whole.")
    review: dict[str, object] | None
    receipt: SignedReceipt | None
    checkpoint: str | None = Field(
        description="The log's latest checkpoint (a C2SP signed note) the entries are proven in."
    )
    entries: list[dict[str, object]] = Field(
        description="Every log entry about the judgement, in the order written: its index, "
        "leaf, leaf hash and inclusion proof in the checkpoint."
    )
    keys: dict[str, object] = Field(
        description="MAGI's public keys, for convenience: check with the published ones."
    )
    level: int = Field(description="Its level in its escalation story (1: the one submitted).")
    levels: list["EvidencePack"] = Field(
        description="The other levels of its escalation story (docs/escalation.md), in order, "
        "each a pack of its own with no levels; `magi verify` checks the whole story. Empty "
        "when it never escalated."
    )
