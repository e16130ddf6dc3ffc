"""Judgements and their certificates as every surface reports them: the API's answers
(api/schemas.py documents them), the MCP tools', the webhooks', the command line's and
the JSON exports. Pydantic models, each built from its record by `from_record`: no
surface writes the shape by hand (a saved panel's: outcome/panel_answers.py).

Answers forbid unknown fields: a key not described here fails the suite instead of
reaching clients undocumented.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from judgements import models
from judgements.models import Confirmation, Decision, Override, Status
from judgements.outcome.receipt_answers import SignedReceipt, receipt_of
from judgements.outcome.story_answers import Cascade, Escalation, level_in_force, story_levels
from judgements.outcome.verdict_answers import AgentResult, Probability, agents_of
from judgements.outcome.verdict_answers import trust_words as trust_words

Count = Annotated[int, Field(ge=0)]
Ratio = Annotated[float | None, Field(ge=0, le=1)]
Id = Annotated[int, Field(ge=1)]
# The models' own choices: documented as their enums, sent as their values.
DecisionName = Decision
StatusName = Status
# As the models write them (datetime.isoformat), passed through unchanged.
DateTime = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
ETag = Annotated[
    str,
    Field(
        description="The object's version as its ETag: send it in If-Match to change or "
        "delete it (a stale one answers 412)."
    ),
]


class Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentSpec(Answer):
    """An agent as stored: what it was given, whether or not its model is still served."""

    name: str
    model: str
    criteria: str


# --- judgements --------------------------------------------------------------------------


class Review(Answer):
    by: str = Field(description="The username of the reviewer.")
    at: DateTime
    reason: str
    decision: DecisionName

    @classmethod
    def from_record(cls, review: Override | Confirmation) -> "Review":
        return cls(
            by=review.by.get_username(),
            at=review.at.isoformat(),
            reason=review.reason,
            decision=review.decision,
        )


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


class TestedRule(Evaluated):
    passed: bool = Field(
        description="Whether its bound on the held-out verdicts reached the target with no "
        "injection approval kept; the sequence stops at the first that did not."
    )


class CertificateSplit(Answer):
    seed: int = Field(description='Cases are ordered by sha256("<seed>:<case>").')
    selection_share: Annotated[float, Field(gt=0, lt=1)] = Field(
        description="The share of the cases, first in that order, that chose the rule."
    )
    selection: list[str] = Field(description="The keys of the verdicts that chose the rule.")
    test: list[str] = Field(
        description="The keys of the held-out verdicts that tested it (one per case)."
    )


class CertificateSuite(Answer):
    run: int
    suite: PanelLink
    cases: list[str]


class Certificate(Answer):
    """A panel's certificate: the rule under which its verdicts say "Not contested",
    chosen on part of the labelled verdicts and tested on the rest by a fixed sequence
    test, so that the verdicts it keeps are at least `bound` accurate with confidence
    1 - delta, on verdicts drawn like the labelled ones; or, when no rule passes, the
    first rule tested and how close it came."""

    id: int
    panel: int
    created_at: DateTime
    certified: bool
    target: Annotated[float, Field(gt=0, lt=1)]
    delta: Annotated[float, Field(gt=0, lt=1)]
    samples: Count
    method: str = Field(
        description='How the rule was chosen and tested: "split-fixed-sequence"; "search" '
        "for a certificate made before (voided)."
    )
    split: CertificateSplit | None = Field(description="Which verdicts chose and which tested.")
    tested: list[TestedRule] = Field(
        description="Every rule tested on the held-out verdicts, strictest first."
    )
    rule: RuleAnswer | None
    coverage: Probability = Field(description="The share of the held-out verdicts it keeps.")
    accuracy: Probability = Field(description="The accuracy of the held-out verdicts it keeps.")
    bound: Probability = Field(
        description="What is promised: the kept verdicts are at least this accurate, with "
        "confidence 1 - delta (the target, when certified)."
    )
    kept: Count = Field(description="How many held-out verdicts it keeps.")
    best: Evaluated | None
    runs: list[int]
    suites: list[CertificateSuite]
    agents: list[dict[str, str]]
    voided_at: DateTime | None
    void_reason: str
    words: str = Field(description="The certificate in one sentence.")
    cascade: Cascade | None = Field(
        description="A cascade's certificate: its levels and report; null for a "
        "certificate of the panel alone."
    )

    @classmethod
    def from_record(cls, certificate: models.Certificate) -> "Certificate":
        """The certificate as the API and the webhooks give it; its rule, best rule and
        suites as stored."""
        return cls(
            id=certificate.pk,
            panel=certificate.panel_id,
            created_at=certificate.created_at.isoformat(),
            certified=certificate.certified,
            target=certificate.target,
            delta=certificate.delta,
            samples=certificate.samples,
            method=certificate.method,
            split=certificate.split or None,
            tested=certificate.tested,
            rule=certificate.rule,
            coverage=certificate.coverage,
            accuracy=certificate.accuracy,
            bound=certificate.bound,
            kept=certificate.kept,
            best=certificate.best,
            runs=certificate.runs,
            suites=certificate.suites,
            agents=certificate.agents,
            voided_at=None if certificate.voided_at is None else certificate.voided_at.isoformat(),
            void_reason=certificate.void_reason,
            words=certificate.describe(),
            cascade=Cascade.of(certificate),
        )


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

    @classmethod
    def from_record(cls, judgement: models.Judgement) -> "ChecksFound":
        """What the checks beside the vote found, read from the prefetched checks."""
        names = {agent.pk: agent.name for agent in judgement.agents.all()}
        found = cls(second_opinion=None, injection_screen=None, probes=[])
        for check in sorted(judgement.checks.all(), key=lambda c: (c.kind, c.attempt, c.pk)):
            if check.error:
                continue
            if check.kind == models.CheckKind.SECOND_OPINION:
                found.second_opinion = SecondOpinionFound(
                    decision=check.decision, p_approve=check.p_approve
                )
            elif check.kind == models.CheckKind.SCREEN:
                found.injection_screen = ScreenFound(steered=check.steered)
            elif check.kind == models.CheckKind.PROBE and check.agent_id is not None:
                found.probes.append(
                    ProbeFound(agent=names.get(check.agent_id, ""), p_approve=check.p_approve)
                )
        return found


class Confidence(Answer):
    answer: Probability = Field(
        description="The least sure agent's probability of the verdict, from its last answer."
    )
    probe: Probability = Field(description="The same from the agents' one-word round-1 probes.")


class Judgement(Answer):
    """Fail-closed: proceed only when "status" is "approved". Every other value (rejected,
    held, error, idle, judging, or one this document does not list) and every error answer
    mean do not proceed. For an escalation story, every field but id, title and
    escalation describes the level in force (the story's `in_force`): its panel, agents,
    mark and receipt are the verdict's that "status" says."""

    id: Id
    title: str
    status: StatusName = Field(
        description="The verdict in force: the next level's when this one escalated "
        "(idle or judging while it runs); the override's; else held while a contested "
        "verdict waits for a person; else the panel's."
    )
    panel_status: StatusName = Field(
        description="What the panel decided (in a story, the level in force's panel)."
    )
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
    receipt: SignedReceipt | None = Field(
        description="The verdict's signed receipt (docs/evidence.md), which `magi verify` "
        "checks offline: in a story the level in force's (a person's review's once one "
        "decided it); null while undecided, after an error, and for a verdict from "
        "before the audit chain started."
    )
    escalation: Escalation | None = Field(description=Escalation.__doc__)

    @classmethod
    def from_record(cls, judgement: models.Judgement) -> "Judgement":
        """The judgement as every surface reports it, read from one loaded with
        Judgement.objects.with_results(). "status" is the verdict in force, "panel_status"
        what the panel decided (they differ only after a human override). For a level
        of an escalation story, everything but its id, title and story is the level in
        force's (docs/escalation.md): the verdict, its mark, agents and receipt agree,
        and each level's own stands beside them in the story's levels."""
        levels = story_levels(judgement)
        shown = level_in_force(judgement, levels)
        override = shown.override_or_none
        confirmation = shown.confirmation_or_none
        return cls(
            id=judgement.pk,
            title=judgement.title,
            status=judgement.verdict,
            panel_status=shown.status,
            contested=shown.contested,
            contest_reasons=list(shown.contest_reasons),
            trust=shown.trust,
            trust_words=trust_words(shown),
            certificate=None
            if shown.certificate is None
            else Certificate.from_record(shown.certificate),
            confidence=Confidence(answer=shown.answer_confidence, probe=shown.probe_confidence),
            checks=ChecksFound.from_record(shown),
            hold_contested=shown.hold_contested,
            hold_unmeasured=shown.hold_unmeasured,
            override=None if override is None else Review.from_record(override),
            confirmation=None if confirmation is None else Review.from_record(confirmation),
            error=shown.error_message or None,
            panel=None
            if shown.panel is None
            else PanelLink(id=shown.panel.pk, name=shown.panel.name),
            agents=agents_of(shown),
            receipt=receipt_of(shown),
            escalation=Escalation.of(judgement, levels),
        )

    def as_json(self) -> dict[str, Any]:
        """As JSON, for what sends or prints it: the MCP tools, webhooks, exports."""
        return self.model_dump(mode="json")
