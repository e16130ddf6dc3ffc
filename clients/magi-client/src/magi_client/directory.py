"""A configuration directory, read into what the API takes (writing.py writes one back)
(docs/config-as-code.md):

    panels/<name>.yaml          shared panels with no team (MAGI's examples; staff only)
    suites/<name>.jsonl         shared suites with no team
    teams/<team>/team.yaml      the team's members, budgets and Slack connection
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
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, Required, TypedDict, TypeVar

import yaml

from magi_client import names, schema, schema_check


class Agent(TypedDict):
    """One of a panel's three agents, as a file and the API spell it."""

    name: str
    model: str
    criteria: str


class PanelDefaults(TypedDict):
    """A panel's settings a file may leave out, each with its value then (PANEL_DEFAULTS)."""

    description: str
    hold_contested: bool | None
    run_checks: bool | None
    reviewers: list[str]
    team_reviews: bool
    four_eyes: bool
    notify_contested: bool


class PanelOptional(TypedDict, total=False):
    """A panel's settings written only when set, after run_checks: a panel without the
    setting reads and exports as it did before the setting existed."""

    # null (or left out) is "not set", the server's default; [] is "no variant".
    prompt_variants: list[str] | None
    # The name of the panel its unkept verdicts go to before a person
    # (docs/escalation.md), one of the same team's panels or a shared one; left out: none.
    escalate_to: str | None


class Panel(PanelDefaults, PanelOptional):
    """A panel in the directory's shape: what the API takes, a plan compares and an export
    writes (panel_spec gives its field order)."""

    name: str
    agents: list[Agent]


class PanelFile(PanelOptional, total=False):
    """A panel file (panels/<name>.yaml) as schema.PANEL admits it."""

    name: Required[str]
    agents: Required[list[Agent]]
    description: str
    hold_contested: bool | None
    run_checks: bool | None
    reviewers: list[str]
    team_reviews: bool
    four_eyes: bool
    notify_contested: bool


class Budget(TypedDict):
    """A budget as team.yaml spells it (schema.BUDGET): the team's, or a panel's or a
    member's when named."""

    period: str
    limit: float
    unit: str
    panel: NotRequired[str]
    user: NotRequired[str]


class TeamSettings(TypedDict, total=False):
    """What team.yaml and a team on the server share (members left out: left as they are)."""

    members: list[str]
    budgets: list[Budget]


class SlackFile(TypedDict, total=False):
    """team.yaml's `slack:` (schema.SLACK): its secrets named by environment variable."""

    channel: str
    direct_messages: bool
    bot_token_env: str
    signing_secret_env: str


class Slack(TypedDict):
    """A team's Slack connection as a plan compares it and the API takes it; its secrets
    (read from the environment) only when the file names them, never exported."""

    channel: str
    direct_messages: bool
    bot_token: NotRequired[str]
    signing_secret: NotRequired[str]


class TeamFile(TeamSettings, total=False):
    """team.yaml as schema.TEAM admits it (each part left out: left as it is)."""

    slack: SlackFile


class Suite(TypedDict):
    """A suite: its name (the file's) and its cases as the file's JSONL text."""

    name: str
    cases: str


class ScopeSpec(TypedDict):
    """The panels and suites of one team, or the shared ones."""

    panels: list[Panel]
    suites: list[Suite]


class TeamSpec(ScopeSpec, TeamSettings):
    """A team folder: team.yaml's settings, its Slack connection, its panels and suites."""

    slack: NotRequired[Slack]


class DirectoryState(TypedDict):
    """A whole directory as the API takes it, by team name; examples: the shared panels and
    suites, when the directory has any."""

    teams: dict[str, TeamSpec]
    examples: NotRequired[ScopeSpec]


PANEL_DEFAULTS: PanelDefaults = {
    "description": "",
    "hold_contested": None,
    "run_checks": None,
    "reviewers": [],
    "team_reviews": False,
    "four_eyes": False,
    "notify_contested": False,
}
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


def panel_spec(whole: Panel) -> Panel:
    """A panel in the directory's shape and field order (a file's, an export's): every
    field of Panel, prompt_variants and escalate_to only when they are set."""
    optional: PanelOptional = {}
    if whole.get("prompt_variants") is not None:
        optional["prompt_variants"] = whole["prompt_variants"]
    if whole.get("escalate_to") is not None:
        optional["escalate_to"] = whole["escalate_to"]
    return {
        "name": whole["name"],
        "description": whole["description"],
        "agents": whole["agents"],
        "hold_contested": whole["hold_contested"],
        "run_checks": whole["run_checks"],
        **optional,
        "reviewers": whole["reviewers"],
        "team_reviews": whole["team_reviews"],
        "four_eyes": whole["four_eyes"],
        "notify_contested": whole["notify_contested"],
    }


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

    state: DirectoryState
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


def settled_panel(panel: Panel) -> Panel:
    """A panel's typed texts as the server keeps them (names.settled): a criterion written
    as a YAML block scalar ends in a line break the server drops, and a plan comparing the
    two would never settle."""
    agents: list[Agent] = [
        {
            **agent,
            "name": names.settled(agent["name"]),
            "criteria": names.settled(agent["criteria"]),
        }
        for agent in panel["agents"]
    ]
    return {
        **panel,
        "name": names.settled(panel["name"]),
        "description": names.settled(panel["description"]),
        "agents": agents,
    }


# --- reading ----------------------------------------------------------------------------


def read(root: Path) -> Directory:
    """The directory as the API takes it, or BadDirectory with every problem."""
    if not root.is_dir():
        raise BadDirectory([Problem(str(root), 0, "", "Not a directory.")])
    reader = Reader(root)
    state: DirectoryState = {"teams": {}}
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

    def team(self, folder: Path) -> TeamSpec:
        address = f"teams.{folder.name}"
        settings: TeamSettings = {}
        slack: Slack | None = None
        path = folder / "team.yaml"
        if path.exists():
            source = Source(self.name(path))
            data: TeamFile | None = self.load(path, source, schema.TEAM)
            # The team itself and whatever of it no panel or suite file holds.
            self.sources[address] = source
            if isinstance(data, dict):
                if "members" in data:
                    settings["members"] = data["members"]
                if "budgets" in data:
                    settings["budgets"] = data["budgets"]
                if "slack" in data:
                    slack = self.slack(data["slack"], source)
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
        scope = self.scope(folder, address, team=settings)
        spec: TeamSpec = {"panels": scope["panels"], "suites": scope["suites"]}
        if "members" in settings:
            spec["members"] = settings["members"]
        if "budgets" in settings:
            spec["budgets"] = settings["budgets"]
        if slack is not None:
            spec["slack"] = slack
        if "members" in spec:
            spec["members"] = sorted(spec["members"])
        self.check_budgets(spec, address)
        return spec

    def slack(self, written: SlackFile, source: Source) -> Slack:
        """The connection as the API takes it, each secret read from the environment
        variable the file names (an unset one is a problem naming it: nothing is sent)."""
        found: Slack = {
            "channel": written.get("channel", ""),
            "direct_messages": written.get("direct_messages", False),
        }
        bot_token = self.environment(written, "bot_token_env", source)
        if bot_token:
            found["bot_token"] = bot_token
        signing_secret = self.environment(written, "signing_secret_env", source)
        if signing_secret:
            found["signing_secret"] = signing_secret
        return found

    def environment(
        self,
        written: SlackFile,
        variable: Literal["bot_token_env", "signing_secret_env"],
        source: Source,
    ) -> str:
        """The value of the environment variable the file names at `variable` ("": none)."""
        name = written.get(variable)
        if name is None:
            return ""
        value = os.environ.get(name, "")
        if not value:
            message = f"The environment variable {name} is not set (or is empty)."
            self.problems.append(source.problem(f"slack.{variable}", message))
        return value

    def scope(self, folder: Path, address: str, team: TeamSettings | None) -> ScopeSpec:
        panels = []
        first: dict[str, Problem] = {}
        for path in self.files(folder / "panels", ".yaml"):
            source = Source(self.name(path))
            panel: PanelFile | None = self.load(path, source, schema.PANEL)
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
        suites: list[Suite] = []
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
        None when it has problems (recorded). Any: the YAML as parsed (yaml.safe_load's),
        given back only when `shape` admits it, so the caller reads it as the TypedDict
        of that schema (TeamFile, PanelFile)."""
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
            source.problem(at, message) for at, message in schema_check.problems(data, shape)
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

    def panel(self, panel: PanelFile, source: Source, team: TeamSettings | None) -> Panel:
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
        for first, second, what in schema.EXCLUSIVE_VARIANTS:
            if {first, second} <= named:
                self.problems.append(
                    source.problem(
                        "prompt_variants",
                        f"{first} and {second} both say how to {what}: choose one.",
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
            found = schema_check.problems(case, schema.SUITE_CASE)
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

    def check_member_budgets(self, teams: dict[str, TeamSpec]) -> None:
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

    def check_budgets(self, spec: TeamSpec, address: str) -> None:
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
