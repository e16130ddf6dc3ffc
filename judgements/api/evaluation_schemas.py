"""What the API of evaluations answers and takes: suites, runs and their reports, as
pydantic models django-ninja checks and documents (api/schemas.py has the shared parts)."""

from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, ConfigDict, Field, StrictInt, StrictStr, model_validator
from pydantic_core import PydanticCustomError

from judgements.core import rules
from judgements.evaluations.runs import MAX_REPEATS
from judgements.intake import schemas
from judgements.outcome.answers import AgentSpec, Answer, Count, DateTime, Id, Ratio

NOT_A_SUITE = "Must be a suite's name (a string) or id (an integer)."
# By round after the first: {"2": n, "3": n}.
ByRound = Annotated[
    dict[str, Count],
    Field(
        json_schema_extra={"propertyNames": {"enum": [str(n) for n in range(2, rules.ROUNDS + 1)]}}
    ),
]


# --- suites and evaluation runs ----------------------------------------------------------


class Suite(Answer):
    id: Id
    name: str
    description: str
    example: bool = Field(description="Shipped with MAGI (no owner), usable by everyone.")
    cases: Count
    export: str = Field(description="Where to GET it as JSONL.")


class SuiteList(Answer):
    suites: list[Suite]


def panel_or_agents(schema: dict[str, Any]) -> None:
    # Exactly one of the two; a run's name for typed agents only, as a saved panel runs
    # under its own.
    schema["oneOf"] = [
        {"required": ["agents"], "not": {"required": ["panel"]}},
        {
            "required": ["panel"],
            "not": {"anyOf": [{"required": ["agents"]}, {"required": ["panel_name"]}]},
        },
    ]


class EvaluationRequest(schemas.Strict):
    model_config = ConfigDict(json_schema_extra=panel_or_agents)
    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"panel" or "agents", "suite", "repeat"}.')
    # What a field is told whatever pydantic found wrong with it.
    MESSAGES: ClassVar = {"repeat": f"Must be a whole number from 1 to {MAX_REPEATS}."}

    panel: Annotated[StrictStr | StrictInt, schemas.reference(schemas.NOT_A_REFERENCE)] = (
        schemas.optional(description="A saved panel's name or id (GET /api/panels/).")
    )
    agents: schemas.Agents = schemas.optional()
    panel_name: Annotated[StrictStr, Field(min_length=1, max_length=100)] = schemas.optional(
        description='With "agents" only: the name the run reports them under ("Unsaved '
        'panel" by default).'
    )
    suite: Annotated[StrictStr | StrictInt, schemas.reference(NOT_A_SUITE)] = Field(
        description="A suite's name or id (GET /api/suites/)."
    )
    repeat: Annotated[
        StrictInt, Field(ge=1, le=MAX_REPEATS), BeforeValidator(schemas.whole_number)
    ] = Field(default=1, description="How many times each case is judged.")

    @model_validator(mode="after")
    def panel_or_agents(self) -> "EvaluationRequest":
        given = self.model_fields_set
        if "agents" in given and "panel" in given:
            raise PydanticCustomError("one_of", schemas.BOTH_GIVEN, schemas.both_fields("panel"))
        if "agents" not in given and "panel" not in given:
            raise PydanticCustomError("one_of", schemas.NEITHER_GIVEN, schemas.both_fields("panel"))
        if "panel" in given and "panel_name" in given:
            raise PydanticCustomError(
                "one_of",
                'Only with "agents": a saved panel runs under its name.',
                schemas.both_fields("panel_name"),
            )
        return self


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


class Report(Answer):
    """What the run's judgements say about the panel, with the key names of `manage.py
    evaluate --json`. Ratios are 0..1, or null when there was nothing to count; errors are
    counted apart, never as a verdict."""

    cases: Count
    repeats: Annotated[int, Field(ge=1)]
    judgements: Count
    accuracy: Ratio
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
    created_at: DateTime
    url: str = Field(description="The run's page.")
    cancelled_at: DateTime | None = Field(
        description="When the run was cancelled; null if it was not."
    )
    cancelled_by: str | None = Field(description="Who cancelled it (a username).")
    progress: Progress
    report: Report | None = Field(description="null until every judgement of the run has ended.")


# --- certifying a panel ------------------------------------------------------------------

BETWEEN_0_AND_1 = "Must be a number between 0 and 1, both excluded."
Fraction = Annotated[float, Field(gt=0, lt=1)]


class CertifyRequest(schemas.Strict):
    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"target", "delta", "runs"}, each optional.')
    MESSAGES: ClassVar = {
        "target": BETWEEN_0_AND_1,
        "delta": BETWEEN_0_AND_1,
        "runs": "Must be a list of evaluation run ids.",
    }

    target: Fraction = Field(
        default=0.9,
        description="The accuracy the kept verdicts' lower bound must reach (0.9: 90 %).",
    )
    delta: Fraction = Field(
        default=0.1,
        description="The risk that the bound is wrong: it holds with confidence 1 - delta.",
    )
    # 1.0 is a whole number in JSON (and in the document), so it is run 1.
    runs: Annotated[
        list[Annotated[StrictInt, Field(ge=1), BeforeValidator(schemas.whole_number)]],
        Field(max_length=1000),
    ] = schemas.optional(
        description="Measure on these finished runs of the panel's current agents only "
        "(by default: every one)."
    )
