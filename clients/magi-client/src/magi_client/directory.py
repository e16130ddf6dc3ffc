"""A configuration directory, read into what the API takes (writing.py writes one back)
(docs/config-as-code.md):

    panels/<name>.yaml          shared panels with no team (MAGI's examples; staff only)
    suites/<name>.jsonl         shared suites with no team
    teams/<team>/team.yaml      the team's members and budgets
    teams/<team>/panels/*.yaml  the team's panels
    teams/<team>/suites/*.jsonl the team's suites, one case a line; the file's name is
                                the suite's

Every file is checked against its JSON Schema (schema.py) and against what one file
alone cannot say (a duplicate name, a reviewer outside the team, a budget of a panel that
is not there); every problem names its file, line and field. Each object keeps the
address its fields have in the API's answers (`teams.payments.panels.deploy gate`), so a
refusal by the server is told against the file and line it came from, too.
"""

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from magi_client import names, schema

PANEL_DEFAULTS: dict[str, Any] = {
    "description": "",
    "hold_contested": None,
    "run_checks": None,
    "reviewers": [],
    "team_reviews": False,
    "four_eyes": False,
    "notify_contested": False,
}
PANEL_FIELDS = ["name", "description", "agents", *list(PANEL_DEFAULTS)[1:]]
# Written only when set, after this field: a panel without the setting reads and exports
# as it did before the setting existed. prompt_variants: null (or left out) is "not set",
# the server's default; [] is "no variant".
# escalate_to: the name of the panel its unkept verdicts go to before a person
# (docs/escalation.md), one of the same team's panels or a shared one; left out: none.
PANEL_OPTIONAL = {"prompt_variants": "run_checks", "escalate_to": "run_checks"}
# A panel as a directory spells it, read or about to be sent: escalation_order keeps the
# kind it is given.
PanelSpec = TypeVar("PanelSpec", bound=Mapping[str, object])
SUITE_LINE = re.compile(r"line (\d+)\.?(.*)")


@dataclass(frozen=True)
class Problem:
    """What is wrong, where: `teams/a/panels/x.yaml:7: agents[1].model: Required.`"""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}"
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )


def panel_spec(whole: dict[str, Any]) -> dict[str, Any]:
    """A panel in the directory's shape and field order (a file's, an export's): every
    field of PANEL_FIELDS, and each of PANEL_OPTIONAL only when it is set."""
    spec: dict[str, Any] = {}
    for name in PANEL_FIELDS:
        spec[name] = whole[name]
        for optional, after in PANEL_OPTIONAL.items():
            if after == name and whole.get(optional) is not None:
                spec[optional] = whole[optional]
    return spec


def escalation_order(panels: list[PanelSpec]) -> list[PanelSpec]:
    """The panels with each after the one of them it escalates to (the server refuses a
    panel naming one that does not exist yet); ValueError naming a panel of a cycle."""
    by_key = {comparable(str(panel["name"])): panel for panel in panels}
    ordered: list[PanelSpec] = []
    placed: set[str] = set()
    for panel in panels:
        trail: list[str] = []
        key: str | None = comparable(str(panel["name"]))
        while key is not None and key in by_key and key not in placed:
            if key in trail:
                raise ValueError(by_key[key]["name"])
            trail.append(key)
            target = by_key[key].get("escalate_to")
            following = comparable(target) if isinstance(target, str) else None
            # A panel naming itself is its own problem (Reader.panel), not a cycle's.
            key = None if following == key else following
        for step in reversed(trail):
            placed.add(step)
            ordered.append(by_key[step])
    return ordered


class BadDirectory(Exception):
    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(map(str, problems)))
        self.problems = problems


@dataclass
class Source:
    """One file: its path in the directory, and the line of each field path in it."""

    file: str
    lines: dict[str, int] = field(default_factory=dict)

    def line_of(self, path: str) -> int:
        """The line of the field, or of the nearest field holding it (1: the file)."""
        if self.file.endswith(".jsonl"):
            found = SUITE_LINE.match(path)
            return int(found.group(1)) if found else 1
        while path:
            if path in self.lines:
                return self.lines[path]
            path = re.sub(r"(\[\d+\]|\.[^.\[]*|^[^.\[]*)$", "", path)
        return 1

    def problem(self, path: str, message: str) -> Problem:
        found = SUITE_LINE.match(path) if self.file.endswith(".jsonl") else None
        shown = found.group(2) if found else path
        return Problem(self.file, self.line_of(path), shown, message)


@dataclass
class Directory:
    """What the API takes (`state`) and where each of its objects came from."""

    state: dict[str, Any]
    sources: dict[str, Source]

    def problem(self, path: str, message: str) -> Problem:
        """A refusal by the server at an API path, told against its file and line."""
        prefixes = sorted(self.sources, key=len, reverse=True)
        for prefix in prefixes:
            if path == prefix or path.startswith((prefix + ".", prefix + "[")):
                return self.sources[prefix].problem(path[len(prefix) :].lstrip("."), message)
        return Problem("(directory)", 0, path, message)


# Names compare as the server compares them: the one rule both import (names.py).
comparable = names.comparable_name


def settled_panel(panel: dict[str, Any]) -> dict[str, Any]:
    """A panel's typed texts as the server keeps them (names.settled): a criterion written
    as a YAML block scalar ends in a line break the server drops, and a plan comparing the
    two would never settle."""
    agents = [
        {
            **agent,
            "name": names.settled(agent["name"]),
            "criteria": names.settled(agent["criteria"]),
        }
        for agent in panel["agents"]
    ]
    texts = {key: names.settled(panel[key]) for key in ("name", "description")}
    return {**panel, **texts, "agents": agents}


# --- reading ----------------------------------------------------------------------------


def read(root: Path) -> Directory:
    """The directory as the API takes it, or BadDirectory with every problem."""
    if not root.is_dir():
        raise BadDirectory([Problem(str(root), 0, "", "Not a directory.")])
    reader = Reader(root)
    state: dict[str, Any] = {"teams": {}}
    if (root / "panels").is_dir() or (root / "suites").is_dir():
        state["examples"] = reader.scope(root, "examples", team=None)
    teams = root / "teams"
    if teams.is_dir():
        for folder in sorted(teams.iterdir()):
            if folder.is_dir():
                state["teams"][folder.name] = reader.team(folder)
            else:
                reader.problems.append(Problem(reader.name(folder), 0, "", "Not a team folder."))
    reader.check_member_budgets(state["teams"])
    if reader.problems:
        raise BadDirectory(reader.problems)
    return Directory(state, reader.sources)


class Reader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.problems: list[Problem] = []
        self.sources: dict[str, Source] = {}
        # Scopes with a panel file that could not be read: a budget naming its panel is
        # not told that the panel is missing on top of the panel's own problem.
        self.unread: set[str] = set()

    def name(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def team(self, folder: Path) -> dict[str, Any]:
        address = f"teams.{folder.name}"
        spec: dict[str, Any] = {}
        path = folder / "team.yaml"
        if path.exists():
            source = Source(self.name(path))
            data = self.load(path, source, schema.TEAM)
            # The team itself and whatever of it no panel or suite file holds.
            self.sources[address] = source
            if isinstance(data, dict):
                spec.update(data)
        for extra in sorted(folder.iterdir()):
            if extra.name not in ("team.yaml", "panels", "suites"):
                self.problems.append(
                    Problem(
                        self.name(extra),
                        0,
                        "",
                        "Unknown; a team has team.yaml, panels/ and suites/.",
                    )
                )
        spec.update(self.scope(folder, address, team=spec))
        if "members" in spec:
            spec["members"] = sorted(spec["members"])
        self.check_budgets(spec, address)
        return spec

    def scope(self, folder: Path, address: str, team: dict[str, Any] | None) -> dict[str, Any]:
        panels = []
        first: dict[str, Problem] = {}
        for path in self.files(folder / "panels", ".yaml"):
            source = Source(self.name(path))
            panel = self.load(path, source, schema.PANEL)
            if not isinstance(panel, dict) or not isinstance(panel.get("name"), str):
                self.unread.add(address)
                continue
            key = comparable(panel["name"])
            if key in first:
                self.problems.append(
                    source.problem(
                        "name", f"{first[key].file} already has a panel called {panel['name']!r}."
                    )
                )
                continue
            first[key] = source.problem("name", "")
            self.sources[f"{address}.panels.{names.settled(panel['name'])}"] = source
            panels.append(self.panel(panel, source, team))
        self.check_escalations(panels, address)
        suites = []
        for path in self.files(folder / "suites", ".jsonl"):
            source = Source(self.name(path))
            cases = self.suite(path, source)
            self.sources[f"{address}.suites.{path.stem}"] = source
            suites.append({"name": path.stem, "cases": cases})
        return {"panels": panels, "suites": suites}

    def check_escalations(self, panels: Sequence[Mapping[str, object]], address: str) -> None:
        """No chain of escalate_to among one scope's panels comes back to where it began
        (a team's panel may name a shared one, which names none of the team's)."""
        try:
            escalation_order(list(panels))
        except ValueError as exc:
            name = str(exc)
            source = self.sources[f"{address}.panels.{names.settled(name)}"]
            self.problems.append(
                source.problem("escalate_to", f"The escalation comes back to {name!r}: a cycle.")
            )

    def files(self, folder: Path, suffix: str) -> list[Path]:
        if not folder.is_dir():
            return []
        found = []
        for path in sorted(folder.iterdir()):
            if path.suffix == suffix and path.is_file():
                found.append(path)
            else:
                self.problems.append(Problem(self.name(path), 0, "", f"Not a {suffix} file."))
        return found

    def load(self, path: Path, source: Source, shape: schema.Schema) -> Any:
        """A YAML file's data checked against its schema, its fields' lines in `source`;
        None when it has problems (recorded)."""
        try:
            content = path.read_text(encoding="utf-8")
            node = yaml.compose(content, Loader=yaml.SafeLoader)
            data = yaml.safe_load(content)
        except UnicodeDecodeError:
            self.problems.append(Problem(source.file, 1, "", "Not UTF-8 text."))
            return None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
            line = mark.line + 1 if mark is not None else 1
            what = getattr(exc, "problem", None) or str(exc)
            self.problems.append(Problem(source.file, line, "", f"Not valid YAML: {what}."))
            return None
        if data is None and shape is schema.TEAM:
            data = {}
        before = len(self.problems)
        if node is not None:
            self.map_lines(node, "", source)
        self.problems += [
            source.problem(at, message) for at, message in schema.problems(data, shape)
        ]
        return data if len(self.problems) == before else None

    def map_lines(self, node: yaml.Node, path: str, source: Source) -> None:
        source.lines.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key, value in node.value:
                name = str(key.value)
                at = f"{path}.{name}" if path else name
                if name in seen:
                    self.problems.append(
                        Problem(source.file, key.start_mark.line + 1, at, "Given twice.")
                    )
                seen.add(name)
                source.lines[at] = key.start_mark.line + 1
                self.map_lines(value, at, source)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self.map_lines(item, f"{path}[{index}]", source)

    def panel(
        self, panel: dict[str, Any], source: Source, team: dict[str, Any] | None
    ) -> dict[str, Any]:
        whole = settled_panel({**PANEL_DEFAULTS, **panel})
        whole["reviewers"] = sorted(whole["reviewers"])
        if team is None and (whole["reviewers"] or whole["team_reviews"]):
            self.problems.append(
                source.problem("reviewers", "A panel with no team has no reviewers.")
            )
        variants = whole.get("prompt_variants")
        named = (
            set(variants)
            if isinstance(variants, list) and all(isinstance(name, str) for name in variants)
            else set()
        )
        if named >= set(schema.EXCLUSIVE_VARIANTS):
            self.problems.append(
                source.problem(
                    "prompt_variants",
                    "named_peers and decisions_only both say how to show earlier rounds: "
                    "choose one.",
                )
            )
        target = whole.get("escalate_to")
        if isinstance(target, str) and comparable(target) == comparable(whole["name"]):
            self.problems.append(
                source.problem("escalate_to", "A panel cannot escalate to itself.")
            )
        members = (team or {}).get("members")
        if members is not None:
            for index, reviewer in enumerate(panel.get("reviewers", [])):
                if reviewer not in members:
                    self.problems.append(
                        source.problem(
                            f"reviewers[{index}]",
                            f"{reviewer!r} is not a member of the team (team.yaml's members).",
                        )
                    )
        return panel_spec(whole)

    def suite(self, path: Path, source: Source) -> str:
        try:
            content = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            self.problems.append(Problem(source.file, 1, "", "Not UTF-8 text."))
            return ""
        ids: dict[str, int] = {}
        for number, line in enumerate(content.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
            except ValueError as exc:
                self.problems.append(Problem(source.file, number, "", f"Not valid JSON: {exc}."))
                continue
            found = schema.problems(case, schema.SUITE_CASE)
            for at, message in found:
                self.problems.append(Problem(source.file, number, at, message))
            if not found and (contradiction := schema.rule_problem(case)):
                self.problems.append(Problem(source.file, number, "expected", contradiction))
            case_id = case.get("id") if isinstance(case, dict) else None
            if isinstance(case_id, str):
                if comparable(case_id) in ids:
                    message = f"Line {ids[comparable(case_id)]} already has the id {case_id!r}."
                    self.problems.append(Problem(source.file, number, "id", message))
                ids.setdefault(comparable(case_id), number)
        if not ids and not any(p.file == source.file for p in self.problems):
            self.problems.append(Problem(source.file, 1, "", "Holds no cases."))
        return content

    def check_member_budgets(self, teams: dict[str, dict[str, Any]]) -> None:
        """A member's budget is the member's, whatever the team: one file describes it."""
        first: dict[tuple[object, ...], str] = {}
        for team, spec in sorted(teams.items()):
            source = self.sources.get(f"teams.{team}")
            for index, budget in enumerate(spec.get("budgets", [])):
                if source is None or not isinstance(budget.get("user"), str):
                    continue
                key = (budget["user"], budget["period"], budget["unit"])
                if key in first:
                    message = (
                        f"{first[key]} already has this budget of {budget['user']!r}'s: a "
                        "member's budget is theirs in every team, written once."
                    )
                    self.problems.append(source.problem(f"budgets[{index}]", message))
                first.setdefault(key, source.file)

    def check_budgets(self, spec: dict[str, Any], address: str) -> None:
        source = self.sources.get(address)
        if source is None or "budgets" not in spec:
            return
        panels = {comparable(panel["name"]) for panel in spec["panels"]}
        seen: set[tuple[object, ...]] = set()
        for index, budget in enumerate(spec["budgets"]):
            at = f"budgets[{index}]"
            if "panel" in budget and "user" in budget:
                self.problems.append(source.problem(at, "Give a panel or a user, not both."))
            if (
                "panel" in budget
                and comparable(budget["panel"]) not in panels
                and address not in self.unread
            ):
                message = f"The team has no panel called {budget['panel']!r} (panels/)."
                self.problems.append(source.problem(f"{at}.panel", message))
            if "user" in budget and budget["user"] not in spec.get("members", [budget["user"]]):
                message = f"{budget['user']!r} is not a member of the team."
                self.problems.append(source.problem(f"{at}.user", message))
            if budget["unit"] == "tokens" and not isinstance(budget["limit"], int):
                self.problems.append(source.problem(f"{at}.limit", "Tokens are whole numbers."))
            key = (budget.get("panel"), budget.get("user"), budget["period"], budget["unit"])
            if key in seen:
                message = "Another budget has the same panel or user, period and unit."
                self.problems.append(source.problem(at, message))
            seen.add(key)
