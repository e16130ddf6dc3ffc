"""What the API of evaluations takes (a run to start, a panel to certify) and its list of
suites, as pydantic models django-ninja checks and documents; the answers themselves
(a suite, a run and its report) are evaluations/answers.py's, shared with the pages."""

from typing import Annotated, ClassVar

from pydantic import BeforeValidator, ConfigDict, Field, StrictInt, StrictStr, model_validator
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from judgements.evaluations import answers
from judgements.evaluations.runs import MAX_REPEATS
from judgements.intake import schemas
from judgements.outcome.answers import Answer
from judgements.panels import saved_panels

NOT_A_SUITE = "Must be a suite's name (a string) or id (an integer)."
# --- suites and evaluation runs ----------------------------------------------------------


class SuiteList(Answer):
    suites: list[answers.Suite]


def panel_or_agents(schema: JsonDict) -> None:
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

    panel: Annotated[StrictStr | StrictInt, schemas.reference(saved_panels.NOT_A_REFERENCE)] = (
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


class CertifyCascadeRequest(schemas.Strict):
    WHOLE: ClassVar = ("body", 'Must be a JSON object: {"target", "delta"}, each optional.')
    MESSAGES: ClassVar = {"target": BETWEEN_0_AND_1, "delta": BETWEEN_0_AND_1}

    target: Fraction = Field(
        default=0.9,
        description="The accuracy the cascade's kept verdicts must reach (0.9: 90 %).",
    )
    delta: Fraction = Field(
        default=0.1,
        description="The risk that the promise is wrong, split across the levels.",
    )
