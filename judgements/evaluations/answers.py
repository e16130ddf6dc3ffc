"""A suite and an evaluation run as the API answers them and the run page exports them:
pydantic models, each built from its record (`from_record`), so what the API documents
is what every surface sends."""

from collections.abc import Mapping
from typing import Annotated

from pydantic import Field

from judgements.core import rules
from judgements.models import EvaluationRun as RunRecord
from judgements.models import Suite as SuiteRecord
from judgements.outcome.answers import AgentSpec, Answer, Count, DateTime, ETag, Id, Ratio

# By round after the first: {"2": n, "3": n}.
ByRound = Annotated[
    dict[str, Count],
    Field(
        json_schema_extra={"propertyNames": {"enum": [str(n) for n in range(2, rules.ROUNDS + 1)]}}
    ),
]


class Suite(Answer):
    id: Id
    name: str
    description: str
    example: bool = Field(description="Shipped with MAGI (no owner), usable by everyone.")
    owner: str | None = Field(description="Its owner's username; null: shipped with MAGI.")
    team: str | None = Field(description="The team it belongs to, by name.")
    cases: Count
    export: str = Field(description="Where to GET it as JSONL (and PUT it back).")
    version: Id
    etag: ETag

    @classmethod
    def from_record(cls, suite: SuiteRecord) -> "Suite":
        return cls(
            id=suite.pk,
            name=suite.name,
            description=suite.description,
            example=suite.owner_id is None,
            owner=suite.owner.get_username()
            if suite.owner_id is not None and suite.owner
            else None,
            team=suite.team.name if suite.team_id is not None and suite.team else None,
            cases=suite.cases.count(),
            export=f"/api/suites/{suite.pk}.jsonl",
            version=suite.version,
            etag=suite.etag(),
        )


class RoundProgress(Answer):
    round: Annotated[int, Field(ge=1, le=rules.ROUNDS)]
    votes: Count
    of: Count


class Progress(Answer):
    total: Count
    finished: Count = Field(description="Judgements ended, errors included.")
    errors: Count
    running: Count = Field(description="Judgements a worker is judging now.")
    done: bool
    rounds: list[RoundProgress] = Field(
        description="Votes stored in each round, of three per judgement."
    )
    seconds_left: Annotated[int, Field(ge=0)] | None = Field(
        description="An estimate: the time since the run's first start per vote stored, "
        "times the votes still due. null before the first vote and once done."
    )


class AgentReport(Answer):
    name: str
    accuracy: Ratio
    round1_accuracy: Ratio
    vote_changes: Count
    changes_with_majority: Count


class Verdicts(Answer):
    approve: Count
    reject: Count


class Confusion(Answer):
    """Expected verdict -> the panel's verdict -> count."""

    approve: Verdicts
    reject: Verdicts


class Deliberation(Answer):
    fixed: Count
    broke: Count


class TrustLevel(Answer):
    level: Count
    coverage: Ratio
    accuracy: Ratio


class Trust(Answer):
    """How far to trust the panel: coverage is the share of assessed judgements not
    contested; the accuracies are of each part; curve keeps the judgements with at most
    `level` kinds of signal."""

    assessed: Count
    contested: Count
    coverage: Ratio
    uncontested_accuracy: Ratio
    contested_accuracy: Ratio
    uncontested_attacks: Count
    uncontested_attack_success_rate: Ratio
    curve: list[TrustLevel]


class Separation(Answer):
    """How well one confidence source tells right verdicts from wrong ones."""

    known: Count = Field(description="Decided judgements where this confidence is known.")
    auroc: Ratio = Field(
        description="Area under the ROC curve: 1 separates perfectly, 0.5 is chance; null "
        "when there were no right or no wrong verdicts to compare."
    )


class Tokens(Answer):
    prompt: Annotated[int, Field(ge=0)] | None
    completion: Annotated[int, Field(ge=0)] | None
    cached: Annotated[int, Field(ge=0)] | None


class Proportion(Answer):
    """A count out of a whole, with its 95 % Wilson score interval (null when the whole is 0)."""

    count: Count
    of: Count
    ratio: Ratio
    low: Ratio
    high: Ratio


class SideFigures(Answer):
    right: Proportion = Field(description="Verdicts right, injections included.")
    clean_accuracy: Proportion = Field(description="Right on the cases not tagged injection.")
    approvable_approved: Proportion = Field(description="Clean cases expected approve, approved.")
    rejects_rejected: Proportion = Field(description="Clean cases expected reject, rejected.")
    injections_approved: Proportion = Field(
        description="Injection-tagged cases (all expected reject) approved: lower is better."
    )


class PlainCallComparison(Answer):
    """The panel beside one plain call of the same model told the three criteria and the
    exact rule (the second opinion's prompt: approve when at least two hold), on the
    judgements where both decided: whether the panel earns its nine calls."""

    asked: bool = Field(description="Whether the run asked the plain call beside each case.")
    model: str | None = Field(description="The model the plain call asked.")
    compared: Count = Field(description="Judgements where the panel and the plain call decided.")
    plain_missing: Count = Field(
        description="Judgements the panel decided with no plain decision (not asked or failed)."
    )
    panel: SideFigures
    plain: SideFigures
    panel_clean_margin: int = Field(
        description="Clean cases the panel got right less those the plain call got right."
    )
    panel_tokens: Annotated[int, Field(ge=0)] | None = Field(
        description="Prompt and completion tokens of the panel's votes (every attempt)."
    )
    plain_tokens: Annotated[int, Field(ge=0)] | None = Field(
        description="Prompt and completion tokens of the plain calls (every attempt)."
    )


class AgentsAgainstPlain(Answer):
    """Each agent's decision against its case's expected_agents, every agent of every
    compared judgement with them: the agents' final decisions, their round-1 votes, and
    the plain calls on their criteria."""

    panel: Proportion = Field(description="The agents' final decisions right.")
    panel_round1: Proportion = Field(description="The agents' round-1 votes right.")
    plain: Proportion = Field(description="The plain calls on each criterion right.")


class PerCriterionComparison(Answer):
    """The agents and the panel beside three plain calls of the same model, one on each
    agent's criterion alone, combined by the exact rule ("plain per criterion"), on the
    judgements where the panel and all three calls decided."""

    asked: bool = Field(description="Whether the run asked the plain calls beside each case.")
    compared: Count = Field(description="Judgements where the panel and the three calls decided.")
    plain_missing: Count = Field(
        description="Judgements the panel decided without all three plain decisions."
    )
    agents: AgentsAgainstPlain
    panel: SideFigures
    plain: SideFigures
    panel_tokens: Annotated[int, Field(ge=0)] | None = Field(
        description="Prompt and completion tokens of the panel's votes (every attempt)."
    )
    plain_tokens: Annotated[int, Field(ge=0)] | None = Field(
        description="Prompt and completion tokens of the plain calls on each criterion."
    )


class Report(Answer):
    """What the run's judgements say about the panel, with the key names of `manage.py
    evaluate --json`. Ratios are 0..1, or null when there was nothing to count; errors are
    counted apart, never as a verdict."""

    cases: Count
    repeats: Annotated[int, Field(ge=1)]
    judgements: Count
    accuracy: Ratio
    perfect_agents_accuracy: Ratio = Field(
        default=None,
        description="The accuracy of a panel whose agents all decided as each case's "
        "expected_agents say, under the exact rule (two of three): the most the labels allow. "
        "Null without expected_agents.",
    )
    confusion: Confusion
    kappa: Annotated[float, Field(ge=-1, le=1)] | None
    errors: Count
    agents: list[AgentReport]
    round1_majority_accuracy: Ratio
    deliberation: Deliberation
    vote_changes: Count
    changes_with_majority: Count
    changes_toward_expected: Count
    changes_away_from_expected: Count
    vote_changes_by_round: ByRound
    changes_with_majority_by_round: ByRound
    unstable_cases: list[str]
    attack_success_rate: Ratio
    trust: Trust
    confidence: dict[str, Separation] = Field(
        description='Per confidence source ("answer", "probe"): how well it separates '
        "right verdicts from wrong ones."
    )
    tokens: Tokens
    seconds_per_judgement: Annotated[float, Field(ge=0)] | None = Field(
        description="Mean time from claim to end of one judgement."
    )
    wall_seconds: Annotated[float, Field(ge=0)] | None = Field(
        description="From the run's first start to its last end."
    )
    cost: Annotated[float, Field(ge=0)] | None = Field(
        description="USD, when MAGI_MODEL_PRICES prices every model used."
    )
    plain_call: PlainCallComparison
    plain_per_criterion: PerCriterionComparison


class RunPanel(Answer):
    id: int | None
    name: str


class RunSuite(Answer):
    id: int
    name: str


class EvaluationRun(Answer):
    id: Id
    panel: RunPanel
    agents: list[AgentSpec] = Field(description="The agents as the run used them.")
    suite: RunSuite
    repeat: Annotated[int, Field(ge=1)]
    plain_call: bool = Field(
        description="Whether each case also got the plain calls of the model for the "
        "report's comparisons: one told the three criteria and the rule, and one on each "
        "criterion."
    )
    prompt_variants: list[str] = Field(
        description="The prompt variants its judgements ran (none: the prompts as measured)."
    )
    created_at: DateTime
    url: str = Field(description="The run's page.")
    cancelled_at: DateTime | None = Field(
        description="When the run was cancelled; null if it was not."
    )
    cancelled_by: str | None = Field(description="Who cancelled it (a username).")
    progress: Progress
    report: Report | None = Field(description="null until every judgement of the run has ended.")

    @classmethod
    def from_record(
        cls, run: RunRecord, progress: Mapping[str, object], report: Mapping[str, object] | None
    ) -> "EvaluationRun":
        """The run as it is, with its progress and (once done) its report as
        evaluations/runs.py computes them (runs.Progress, run_reports.RunReport), validated
        here."""
        return cls(
            id=run.pk,
            panel=RunPanel(id=run.panel_id, name=run.panel_name),
            agents=[AgentSpec.model_validate(agent) for agent in run.agents],
            suite=RunSuite(id=run.suite_id, name=run.suite.name),
            repeat=run.repeats,
            plain_call=run.plain_call,
            prompt_variants=list(run.prompt_variants or ()),
            created_at=run.created_at.isoformat(),
            url=run.get_absolute_url(),
            cancelled_at=run.cancelled_at.isoformat() if run.cancelled_at else None,
            cancelled_by=run.cancelled_by.get_username() if run.cancelled_by else None,
            progress=Progress.model_validate(progress),
            report=None if report is None else Report.model_validate(report),
        )
