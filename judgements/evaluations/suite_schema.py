"""One case of a suite (a line of its JSONL), described once: the pydantic model that
checks it, whether it arrives through the API, the page or `manage.py suite import`. Its
texts follow a judgement's rules (intake/schemas.py TypedText), so a suite's case is valid
exactly when it could be judged."""

from typing import Annotated, ClassVar

from pydantic import Field, model_validator

from judgements.core import rules
from judgements.intake import schemas
from judgements.models import Decision

CASE_ID_MAX_CHARS = 100
TAG_MAX_CHARS = 40
MAX_TAGS = 20
VERDICTS = tuple(Decision.values)
VERDICT_MESSAGE = f"Must be {' or '.join(map(repr, VERDICTS))}."

# Not strict: the JSON string "approve" is the choice.
Verdict = Annotated[Decision, Field(strict=False)]
Tag = Annotated[str, schemas.TypedText(lambda: TAG_MAX_CHARS, "A label to group cases by.")]


class SuiteCaseLine(schemas.Strict):
    """{"id", "content", "expected"}, with optional "title", "expected_agents" and "tags"."""

    WHOLE: ClassVar = ("", "Must be a JSON object with id, content and expected.")
    UNKNOWN_FIELD: ClassVar = "Unknown field; the fields are {known}."
    MESSAGES: ClassVar = {
        "expected": VERDICT_MESSAGE,
        "expected_agents": (
            f"Must be a list of {rules.PANEL_SIZE} verdicts, one per agent in panel order."
        ),
        "expected_agents[]": VERDICT_MESSAGE,
        "tags": f"Must be a list of at most {MAX_TAGS} short strings.",
    }

    id: Annotated[
        str, schemas.TypedText(lambda: CASE_ID_MAX_CHARS, "Unique in the suite, ignoring case.")
    ]
    title: Annotated[
        str,
        schemas.TypedText(lambda: schemas.TITLE_MAX_CHARS, "A short title.", required=False),
    ] = ""
    content: schemas.Content
    expected: Verdict
    expected_agents: (
        Annotated[list[Verdict], Field(min_length=rules.PANEL_SIZE, max_length=rules.PANEL_SIZE)]
        | None
    ) = None
    tags: Annotated[list[Tag], Field(max_length=MAX_TAGS)] = []

    @model_validator(mode="after")
    def _expected_follows_the_rule(self) -> "SuiteCaseLine":
        """A gating case's verdict is what the exact rule makes of its agents' expected
        decisions (issue 54): a label no panel of right agents could give is refused."""
        if self.expected_agents is None:
            return self
        by_rule = rules.panel_decision(self.expected_agents)
        # Two enums of the same two words (the rule's Vote, the row's Decision).
        if by_rule.value != self.expected.value:
            raise schemas.rule_error(
                contradiction(self.id, self.expected, self.expected_agents, by_rule),
                fields={"expected": None},
            )
        return self


def contradiction(case_id: str, expected: str, agents: list[Decision], by_rule: rules.Vote) -> str:
    """Why a case's `expected` cannot stand beside its `expected_agents`, in words."""
    listed = ", ".join(str(agent) for agent in agents)
    return (
        f"Case {case_id!r} expects {str(expected)!r}, but its expected_agents ({listed}) give "
        f"{str(by_rule)!r} under the exact rule: a case is approved when at least "
        f"{rules.MAJORITY} of its {rules.PANEL_SIZE} agents approve. Set expected to "
        f"{str(by_rule)!r}, or correct expected_agents."
    )


FIELDS = tuple(SuiteCaseLine.model_fields)
