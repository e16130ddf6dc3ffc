"""What the API answers, and the request bodies only it takes: pydantic models that
django-ninja checks every answer against and documents in /api/schema.json. A case and
its agents are intake/schemas.py's (the command line validates with them too).

Answers forbid unknown fields: a key a view sends that is not described here fails the
suite instead of reaching clients undocumented.
"""

from typing import Annotated, ClassVar, Literal

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
# A probability, or null when unknown.
Probability = Annotated[float | None, Field(ge=0, le=1)]
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
    p_approve: Probability = Field(
        description="The agent's own confidence: the probability of approve against reject "
        "at its decision, from the token log-probabilities; null when the provider gave none."
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


class RuleAnswer(Answer):
    source: Literal["answer", "probe"] | None = Field(
        description="Which confidence the rule reads; null: none."
    )
    threshold: Probability = Field(description="Kept when the confidence is at least this.")
    absent: list[str] = Field(description="Signals that must not have fired.")


class Evaluated(Answer):
    rule: RuleAnswer
    description: str = Field(description="The rule in words.")
    samples: Count
    kept: Count
    right: Count
    injections_kept: Count
    coverage: Probability
    accuracy: Probability
    bound: Annotated[float, Field(ge=0, le=1)]


class CertificateSuite(Answer):
    run: int
    suite: PanelLink
    cases: list[str]


class Certificate(Answer):
    """A panel's certificate: the rule under which its verdicts say "Not contested", with
    the one-sided Clopper-Pearson lower bound, at confidence 1 - delta, on the accuracy of
    the verdicts it keeps; or, when no rule reaches the target, the best bound reached."""

    id: int
    panel: int
    created_at: DateTime
    certified: bool
    target: Annotated[float, Field(gt=0, lt=1)]
    delta: Annotated[float, Field(gt=0, lt=1)]
    samples: Count
    rule: RuleAnswer | None
    coverage: Probability
    accuracy: Probability
    bound: Probability
    kept: Count
    best: Evaluated | None
    runs: list[int]
    suites: list[CertificateSuite]
    agents: list[dict[str, str]]
    voided_at: DateTime | None
    void_reason: str
    words: str = Field(description="The certificate in one sentence.")


class SecondOpinionFound(Answer):
    decision: DecisionName | None
    p_approve: Probability


class ScreenFound(Answer):
    steered: bool | None = Field(
        description="The content steered the model away from repeating a check word."
    )


class ProbeFound(Answer):
    agent: str
    p_approve: Probability


class ChecksFound(Answer):
    """What the calls beside the vote found (null or empty: not run, or failed); none of
    them is a vote."""

    second_opinion: SecondOpinionFound | None
    injection_screen: ScreenFound | None
    probes: list[ProbeFound]


class Confidence(Answer):
    answer: Probability = Field(
        description="The least sure agent's probability of the verdict, from its last answer."
    )
    probe: Probability = Field(description="The same from the agents' one-word round-1 probes.")


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
    trust: Literal["contested", "not_contested", "unmeasured"] | None = Field(
        description='What a user may do with the verdict: "contested" (a person should '
        'look first), "not_contested" (kept by its panel\'s certificate, within the stated '
        'bound), "unmeasured" (no certificate holds for these agents: trust not measured '
        "for this panel); null until decided. It never changes the verdict."
    )
    trust_words: str | None = Field(description="The mark in words, as the page says it.")
    certificate: Certificate | None = Field(
        description="The panel's certificate the mark was read against, if any."
    )
    confidence: Confidence
    checks: ChecksFound
    hold_contested: bool
    hold_unmeasured: bool = Field(
        description="A verdict whose trust is not measured is held for a person."
    )
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
