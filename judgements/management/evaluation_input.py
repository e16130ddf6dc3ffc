"""What `manage.py evaluate` is given, read and checked (every error at once, named by
its option or field): --repeat, --variants, --target and --delta, the panel (a file or a
saved panel) and the suite stored under the file's name.
"""

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypedDict

from judgements.configuration import suite_config
from judgements.core import prompt_variants, text
from judgements.core.errors import InvalidInput
from judgements.core.json_values import JsonValue
from judgements.evaluations import runs, suites
from judgements.intake import schemas
from judgements.models import Panel, Suite
from judgements.panels import saved_panels, variant_setting

PANEL_FILE_FIELDS = ("name", "description", "agents")


class CertifyOptions(TypedDict):
    """--target and --delta as typed (commands/evaluate.py's add_arguments)."""

    target: str
    delta: str


class EvaluateOptions(CertifyOptions):
    """What `manage.py evaluate` parses: its arguments, as typed, and Django's verbosity."""

    suite: str | None
    panel: str
    repeat: str
    variants: str | None
    json: bool
    certify: bool
    verbosity: int


def certify_options(options: CertifyOptions) -> tuple[float, float]:
    """--target and --delta as numbers in (0, 1); InvalidInput naming each that is not."""
    errors: dict[str, list[str]] = {}
    values = []
    for name in ("target", "delta"):
        try:
            value = float(options[name])
        except ValueError:
            value = -1.0
        if not 0 < value < 1:
            errors[name] = ["Must be a number between 0 and 1, both excluded."]
        values.append(value)
    if errors:
        raise InvalidInput(errors)
    return values[0], values[1]


def parse_variants(value: str | None, errors: dict[str, list[str]]) -> list[str] | None:
    """--variants as start_run takes them: None when not given (the panel's setting)."""
    if value is None:
        return None
    try:
        return variant_setting.named_variants(value)
    except ValueError as exc:
        errors["--variants"] = [str(exc)]
        return None


def same_variants(panel: Panel, variants: list[str], errors: dict[str, list[str]]) -> None:
    """A certificate measures the panel as it runs: a run with other variants than the
    panel's would not count, so --certify with them is refused before the run."""
    try:
        own = variant_setting.variants_for(panel)
    except InvalidInput as exc:
        errors.update(exc.errors)
        return
    if prompt_variants.parse(variants) != own:
        errors["--variants"] = [
            f"--certify measures the panel with its own prompt variants "
            f"({prompt_variants.label(own)}): leave --variants out, or change the panel's."
        ]


def parse_repeat(value: str, errors: dict[str, list[str]]) -> int:
    if value.isascii() and value.isdecimal() and 1 <= int(value) <= runs.MAX_REPEATS:
        return int(value)
    errors["repeat"] = [f"Must be a whole number from 1 to {runs.MAX_REPEATS}."]
    return 1


def read_panel(
    reference: str, errors: dict[str, list[str]]
) -> tuple[Panel | None, Sequence[Mapping[str, object]], str]:
    """(Panel or None, agents, name) from a panel file or a saved panel. A file's agents
    are its JSON as read (none when they are not valid): start_run validates them again."""
    path = Path(reference)
    if not path.is_file():
        try:
            panel = saved_panels.resolve(reference, None)
        except InvalidInput as exc:
            message = " ".join(exc.errors.get("panel", []))
            errors["panel"] = [f"{message} Nor is it a panel file."]
            return None, [], ""
        return panel, saved_panels.agents_of(panel), panel.name
    try:
        spec: JsonValue = json.loads(path.read_bytes().decode("utf-8-sig"))
    except OSError as exc:
        errors["panel"] = [f"Cannot read {reference}: {exc.strerror}."]
        return None, [], ""
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        errors["panel"] = [f"{reference} is not a UTF-8 JSON file: {exc}."]
        return None, [], ""
    if not isinstance(spec, dict):
        errors["panel"] = ['The panel file must hold a JSON object {"name", "agents"}.']
        return None, [], ""
    for key in spec:
        if key not in PANEL_FILE_FIELDS:
            errors[f"panel.{text.escaped(str(key))}"] = [
                f"Unknown field; the fields are {', '.join(PANEL_FILE_FIELDS)}."
            ]
    name = spec.get("name")
    if not isinstance(name, str) or not name.strip():
        errors["panel.name"] = ["The panel needs a name (a string)."]
        name = ""
    agents = spec.get("agents")
    try:  # checked now too, so a bad file shows every error at once
        schemas.validated_agents(agents)
    except InvalidInput as exc:
        errors.update({f"panel.{f}": m for f, m in exc.errors.items() if f.startswith("agents")})
        return None, [], name
    # Agents that passed are a JSON list of objects.
    assert isinstance(agents, list)
    return None, [agent for agent in agents if isinstance(agent, dict)], name


def suite_for(path: Path, data: bytes, cases: list[suites.CleanedSuiteCase]) -> Suite:
    """The owner-less suite named after the file: reused when its cases are the file's,
    created when there is none, refused when it holds other cases."""
    name = path.stem
    key = text.comparable_name(name)
    for existing in Suite.objects.filter(owner=None):
        if text.comparable_name(existing.name) == key:
            if suites.cases_of(existing) == cases:
                return existing
            raise InvalidInput(
                {
                    "suite": [
                        f"A different suite is already called {existing.name!r}: rename the "
                        "file, or import it under another name with `manage.py suite import`."
                    ]
                }
            )
    try:
        description = f"Imported by manage.py evaluate from {path.name}."
        return suite_config.made(
            None, None, None, suite_config.Upload(name, description, None, data)
        )
    except InvalidInput as exc:
        raise InvalidInput(
            {f"suite {f}" if f == "name" else f: m for f, m in exc.errors.items()}
        ) from None
