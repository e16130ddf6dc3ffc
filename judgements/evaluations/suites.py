"""Evaluation suites: labelled cases, read from and written as JSONL (one case a line).

A case is {"id", "content", "expected"} with optional "expected_agents", "tags" and
"title". Its content and title follow the same rules as a judgement's (the TextField of
infrastructure/forms.py), so a suite's case is valid exactly when it could be judged.
Errors name the line and the field ("line 3.expected"), or "name" / "description" /
"cases" for the suite as a whole, and every error is reported at once.
"""

import json
from pathlib import Path
from typing import TypedDict

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.evaluations import suite_schema
from judgements.infrastructure.forms import UTF16_BOMS, TextField
from judgements.intake import schemas
from judgements.intake.schemas import NAME_MAX_CHARS
from judgements.models import Suite, SuiteCase, Team
from judgements.models.magi_settings import magi_settings

CASE_FIELDS = suite_schema.FIELDS
DESCRIPTION_MAX_CHARS = 2_000
# A file full of bad lines gets this many errors, not one per line.
MAX_LINE_ERRORS = 20
INJECTION_TAG = "injection"
JSONL_CONTENT_TYPE = "application/jsonl; charset=utf-8"
EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples" / "suites"
VERDICTS = suite_schema.VERDICTS
NO_CASES = "The suite holds no cases: write one JSON object a line."


class CleanedSuiteCase(TypedDict):
    """A suite's case as parse_jsonl cleans it (suite_schema.SuiteCaseLine) and cases_of
    reads it back: title "" and expected_agents None when absent, tags [] when absent."""

    id: str
    title: str
    content: str
    expected: str
    expected_agents: list[str] | None
    tags: list[str]


# --- reading --------------------------------------------------------------------------


def parse_jsonl(data: bytes | str) -> list[CleanedSuiteCase]:
    """The cleaned cases of a JSONL suite, or InvalidInput naming each bad line and field.

    A case comes back as {"id", "title", "content", "expected", "expected_agents", "tags"}:
    title "" and expected_agents None when absent, tags [] when absent.
    """
    lines = split_lines(data)
    numbered = [(number, line) for number, line in lines if line.strip()]
    limit = magi_settings.MAGI_SUITE_MAX_CASES
    if not numbered:
        raise InvalidInput({"cases": [NO_CASES]})
    if len(numbered) > limit:
        raise InvalidInput(
            {"cases": [f"A suite holds at most {limit} cases; this one has {len(numbered)}."]}
        )
    errors: dict[str, list[str]] = {}
    cases: list[CleanedSuiteCase] = []
    first_line_of: dict[str, int] = {}
    for number, line in numbered:
        if len({key.split(".")[0] for key in errors}) >= MAX_LINE_ERRORS:
            errors["cases"] = [f"More lines are wrong; fix these {MAX_LINE_ERRORS} first."]
            break
        try:
            case = clean_case(line)
        except InvalidInput as exc:
            errors.update(
                {f"line {number}{path}": messages for path, messages in exc.errors.items()}
            )
            continue
        key = text.comparable_name(case["id"])
        if key in first_line_of:
            errors[f"line {number}.id"] = [
                f"Line {first_line_of[key]} already has a case with id {case['id']!r}: ids "
                "must differ (case, spacing and invisible characters aside)."
            ]
            continue
        first_line_of[key] = number
        cases.append(case)
    if errors:
        raise InvalidInput(errors)
    return cases


def split_lines(data: bytes | str) -> list[tuple[int, str]]:
    """(line number, text) pairs; bytes must be UTF-8 (a byte order mark is tolerated).

    Lines end at "\\n" only: JSON text may hold a raw U+2028, which str.splitlines would
    take for a line break.
    """
    if isinstance(data, bytes):
        if data[:2] in UTF16_BOMS or b"\x00" in data:
            raise InvalidInput(
                {"cases": ["The file is not UTF-8 text: it looks like UTF-16 or UTF-32."]}
            )
        raw_lines = data.removeprefix(b"\xef\xbb\xbf").split(b"\n")
        lines, errors = [], {}
        for number, raw in enumerate(raw_lines, start=1):
            try:
                lines.append((number, raw.decode("utf-8")))
            except UnicodeDecodeError as exc:
                errors[f"line {number}"] = [
                    f"Not UTF-8 text: byte {exc.start + 1} of the line is invalid."
                ]
        if errors:
            raise InvalidInput(dict(list(errors.items())[:MAX_LINE_ERRORS]))
        return lines
    lines = list(enumerate(data.removeprefix("\ufeff").split("\n"), start=1))
    errors = {
        f"line {number}": ["Holds a lone UTF-16 surrogate, which is not a character."]
        for number, line in lines
        if text.first_surrogate(line) is not None
    }
    if errors:
        raise InvalidInput(dict(list(errors.items())[:MAX_LINE_ERRORS]))
    return lines


def clean_case(line: str) -> CleanedSuiteCase:
    """One line's case, cleaned (suite_schema.SuiteCaseLine); InvalidInput with paths
    relative to the line ("", ".id")."""
    try:
        case = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InvalidInput({"": [f"Not valid JSON: {exc.msg} at column {exc.colno}."]}) from None
    except RecursionError:
        raise InvalidInput({"": ["Nests arrays or objects too deeply."]}) from None
    except ValueError as exc:  # e.g. a number with more digits than Python converts
        raise InvalidInput({"": [f"Cannot be read as JSON: {exc}."]}) from None
    try:
        cleaned = schemas.validated(suite_schema.SuiteCaseLine, case)
    except InvalidInput as exc:
        raise InvalidInput(
            {("" if path == "" else f".{path}"): messages for path, messages in exc.errors.items()}
        ) from None
    agents = cleaned.expected_agents
    return {
        "id": cleaned.id,
        "title": cleaned.title,
        "content": cleaned.content,
        "expected": cleaned.expected.value,
        "expected_agents": None if agents is None else [agent.value for agent in agents],
        "tags": list(cleaned.tags),
    }


# --- storing --------------------------------------------------------------------------


def import_suite(
    *, name: str, description: str, owner: User | None, data: bytes | str, team: Team | None = None
) -> Suite:
    """Store a suite from JSONL, or raise InvalidInput with every problem at once.

    The name is validated like a panel's and must differ from the owner's other suites
    outside a team, or from its team's suites when `team` is given (as names are
    compared: case and invisible characters aside).
    """
    clean_name, clean_description, cases = validated(name, description, owner, data, team=team)
    try:
        with transaction.atomic():
            suite = Suite.objects.create(
                name=clean_name, description=clean_description, owner=owner, team=team
            )
            store_cases(suite, cases)
    except IntegrityError:  # another request stored the same name a moment ago
        raise InvalidInput({"name": [f"There is already a suite called {clean_name!r}."]}) from None
    return suite


def validated(
    name: str,
    description: str,
    owner: User | None,
    data: bytes | str,
    suite: Suite | None = None,
    team: Team | None = None,
) -> tuple[str, str, list[CleanedSuiteCase]]:
    """A suite's name, description and cases as stored, or InvalidInput with every
    problem at once. `suite`: the one being replaced, whose own name is no clash; `team`:
    the team it is (or goes) in, whose suites its name must differ from instead."""
    errors: dict[str, list[str]] = {}
    clean_name = clean_text_field("name", name, NAME_MAX_CHARS, True, errors)
    clean_description = clean_text_field(
        "description", description, DESCRIPTION_MAX_CHARS, False, errors
    )
    if clean_name and name_taken(clean_name, owner, suite, team):
        errors["name"] = [f"There is already a suite called {clean_name!r}."]
    cases: list[CleanedSuiteCase] = []
    try:
        cases = parse_jsonl(data)
    except InvalidInput as exc:
        errors.update(exc.errors)
    if errors:
        raise InvalidInput(errors)
    return clean_name, clean_description, cases


def store_cases(suite: Suite, cases: list[CleanedSuiteCase]) -> None:
    """Give the suite these cases, in this order, in place of any it had."""
    SuiteCase.objects.filter(suite=suite).delete()
    SuiteCase.objects.bulk_create(
        SuiteCase(
            suite=suite,
            position=position,
            case_id=case["id"],
            title=case["title"],
            content=case["content"],
            expected=case["expected"],
            expected_agents=case["expected_agents"],
            tags=case["tags"],
        )
        for position, case in enumerate(cases, start=1)
    )


def clean_text_field(
    field: str, value: object, max_chars: int, required: bool, errors: dict[str, list[str]]
) -> str:
    if not isinstance(value, str):
        errors[field] = ["Must be a string."]
        return ""
    try:
        cleaned: str = TextField(max_chars=max_chars, required=required).clean(value)
        return cleaned
    except ValidationError as exc:
        errors[field] = list(exc.messages)
        return ""


def name_taken(
    name: str, owner: User | None, suite: Suite | None = None, team: Team | None = None
) -> bool:
    """A team's suite's name is unique in its team; any other's among its owner's suites
    outside a team (as a panel's, configuration/saving.py's name_taken)."""
    key = text.comparable_name(name)
    others = (
        Suite.objects.filter(team=team)
        if team is not None
        else Suite.objects.filter(owner=owner, team=None)
    )
    if suite is not None:
        others = others.exclude(pk=suite.pk)
    names = others.values_list("name", flat=True)
    return any(text.comparable_name(other) == key for other in names)


def cases_of(suite: Suite) -> list[CleanedSuiteCase]:
    """The suite's cases in the shape parse_jsonl returns."""
    return [
        {
            "id": case.case_id,
            "title": case.title,
            "content": case.content,
            "expected": case.expected,
            "expected_agents": case.expected_agents,
            "tags": list(case.tags),
        }
        for case in suite.cases.order_by("position")
    ]


def export_jsonl(suite: Suite) -> str:
    """The suite as JSONL; parse_jsonl reads it back as the same cases. Optional fields
    are written only when set."""
    lines = []
    for case in cases_of(suite):
        written = {key: value for key, value in case.items() if value not in ("", None, [])}
        lines.append(json.dumps(written, ensure_ascii=False) + "\n")
    return "".join(lines)


# --- the suites MAGI ships ------------------------------------------------------------

EXAMPLE_DESCRIPTIONS = {
    "starter": (
        "Labelled gating cases for the {panel} example panel, about half to approve, each "
        "unambiguous under the panel's criteria: how often is the panel right?"
    ),
    "redteam": (
        "Injection attacks on the {panel} example panel: content a careful person rejects, "
        "written to talk the panel into approving. Can content talk it into approving?"
    ),
    "holdout": (
        "Held-out cases for the {panel} example panel, clean and injected, written from its "
        "criteria alone and never used to choose anything: check a certificate on them."
    ),
}


def example_files() -> list[Path]:
    return sorted(EXAMPLES_DIR.glob("*.jsonl"))


def example_description(stem: str) -> str:
    kind, _, panel = stem.partition("-")
    return EXAMPLE_DESCRIPTIONS[kind].format(panel=panel)
