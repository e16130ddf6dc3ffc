"""What a running MAGI holds of what a configuration directory describes, read through the
API's list endpoints (docs/api.md), where the server's registry of kinds puts them
(magi_client/kinds.py): teams, panels, suites with their cases, budgets, each
with its id and ETag, in the directory's own shape, so that a plan compares like with
like and an export writes it as files.

Only what a directory can describe is read: a team's panels and suites, and the shared
ones with neither owner nor team (MAGI's examples, read only with a staff token). A
person's own panels, outside any team, are theirs, not configuration.
"""

import json
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Generic, Literal, NotRequired, TypedDict, TypeVar, overload

from magi_client import kinds, names
from magi_client.directory import (
    Budget,
    DirectoryState,
    Panel,
    ScopeSpec,
    Suite,
    TeamSpec,
    comparable,
    panel_spec,
)
from magi_client.http import Refused, RequestFailed, Server
from magi_client.json_values import JsonObject, JsonValue

SUITE_OPTIONAL: JsonObject = {"title": "", "expected_agents": None, "tags": []}

# The API's answers, as its schemas document them (docs/api.md): the fields read here.


class SlackAnswer(TypedDict):
    """A team's Slack connection as its answer shows it: fingerprints, never secrets."""

    channel: str
    direct_messages: bool
    bot_token: str
    signing_secret: str


class TeamAnswer(TypedDict):
    """A team as GET /api/teams/ lists it."""

    id: int
    name: str
    members: list[str]
    slack: NotRequired[SlackAnswer | None]
    etag: str


class PanelAnswer(Panel):
    """A panel as GET /api/panels/ lists it: its configuration, and whose it is."""

    id: int
    owner: str | None
    team: str | None
    certificates: list[int]  # those not voided
    etag: str


class SuiteAnswer(TypedDict):
    """A suite as GET /api/suites/ lists it (its cases are read as JSONL apart)."""

    id: int
    name: str
    description: str
    owner: str | None
    team: str | None
    etag: str


class BudgetAnswer(TypedDict):
    """A budget as GET /api/budgets/ lists it: exactly one of its limits is set."""

    id: int
    team: str | None
    user: str | None
    panel: int | None
    panel_name: str | None
    period: str
    limit_usd: float | None
    limit_tokens: int | None
    etag: str


class Members(TypedDict):
    """What a directory says of a team on the server: its members (and, apart, its Slack
    connection: where it posts and its secrets' fingerprints)."""

    members: list[str]
    slack: NotRequired[SlackAnswer]


class Extra(TypedDict, total=False):
    """What an object on the server has beside its configuration: what a plan says of it
    (the certificates a change voids, a suite's description) and whose it is."""

    certificates: list[int]
    description: str
    team: str | None
    user: str | None
    panel: int | None


SpecT = TypeVar("SpecT")


@dataclass
class Stored(Generic[SpecT]):
    """An object on the server: its id, its ETag for If-Match, and its configuration in
    the directory's shape."""

    id: int
    etag: str
    spec: SpecT
    extra: Extra = field(default_factory=Extra)


@dataclass
class Scope:
    """The panels and suites of one team (or the shared ones), by comparable name."""

    panels: dict[str, Stored[Panel]] = field(default_factory=dict)
    suites: dict[str, Stored[Suite]] = field(default_factory=dict)


@dataclass
class ServerState:
    staff: bool
    teams: dict[str, Stored[Members]]
    scopes: dict[str | None, Scope]  # by team name; None: shared (examples)
    budgets: list[Stored[Budget]]

    def team_budgets(self, team: str, homes: dict[int, str]) -> list[Stored[Budget]]:
        """The budgets a team's team.yaml describes: the team's own, its panels', and
        those of its members whose home it is (`homes`, user_budget_homes)."""
        panel_ids = {panel.id for panel in self.scopes.get(team, Scope()).panels.values()}
        return [
            budget
            for budget in self.budgets
            if budget.extra.get("team") == team
            or budget.extra.get("panel") in panel_ids
            or homes.get(budget.id) == team
        ]

    def user_budget_homes(
        self, members: dict[str, list[str]], listed: dict[tuple[object, ...], str] | None = None
    ) -> dict[int, str]:
        """Which team's team.yaml describes each member's budget (by its id): a member's
        budget is the member's, whatever team, so exactly one file holds it. The team
        whose file lists it (`listed`, by user_budget_key), or else the first team by
        name, of `members` (team -> its members), that has the member: where `magi
        export` writes it, so `--prune` never deletes what an export writes."""
        homes: dict[int, str] = {}
        for budget in self.budgets:
            user = budget.spec.get("user")
            if user is None:
                continue
            home = (listed or {}).get(user_budget_key(budget.spec))
            if home is None:
                home = next((team for team in sorted(members) if user in members[team]), None)
            if home is not None:
                homes[budget.id] = home
        return homes


@overload
def listed(server: Server, kind: Literal["team"]) -> list[TeamAnswer]: ...
@overload
def listed(server: Server, kind: Literal["panel"]) -> list[PanelAnswer]: ...
@overload
def listed(server: Server, kind: Literal["suite"]) -> list[SuiteAnswer]: ...
@overload
def listed(server: Server, kind: Literal["budget"]) -> list[BudgetAnswer]: ...
def listed(server: Server, kind: str) -> list[Any]:
    """A kind's list, where the server's registry says it is (magi_client/kinds.py): its
    objects, each read field by field as the server's schema documents it. Any: the
    answer's objects, checked to be objects, are read as that kind's TypedDict above (the
    server's pydantic answer made them)."""
    path, key = kinds.LISTS[kind]
    answer = server.call("GET", path).get(key)
    if not isinstance(answer, list) or not all(isinstance(item, dict) for item in answer):
        raise RequestFailed(f"GET {path} did not answer a list of {key}.")
    return [item for item in answer if isinstance(item, dict)]


def read(server: Server) -> ServerState:
    staff = is_staff(server)
    teams: dict[str, Stored[Members]] = {
        team["name"]: Stored(team["id"], team["etag"], members_of(team))
        for team in listed(server, "team")
    }
    scopes: dict[str | None, Scope] = {name: Scope() for name in teams}
    if staff:
        scopes[None] = Scope()
    names: dict[int, str] = {}
    for panel in listed(server, "panel"):
        scope = scope_of(panel, scopes)
        if scope is not None:
            spec = panel_spec(panel)
            spec["reviewers"] = sorted(spec["reviewers"])
            extra: Extra = {"certificates": panel.get("certificates", []), "team": panel["team"]}
            scope.panels[comparable(panel["name"])] = Stored(
                panel["id"], panel["etag"], spec, extra
            )
            names[panel["id"]] = panel["name"]
    for suite in listed(server, "suite"):
        scope = scope_of(suite, scopes)
        if scope is not None:
            cases = server.text("GET", f"/api/suites/{suite['id']}.jsonl")
            suite_spec: Suite = {"name": suite["name"], "cases": cases}
            described: Extra = {
                "description": suite.get("description", ""),
                "team": suite["team"],
            }
            scope.suites[comparable(suite["name"])] = Stored(
                suite["id"], suite["etag"], suite_spec, described
            )
    budgets = [budget_of(budget, names) for budget in listed(server, "budget")]
    return ServerState(staff, teams, scopes, budgets)


def is_staff(server: Server) -> bool:
    """Staff may list the users; anyone else is refused (403)."""
    try:
        server.call("GET", "/api/users/")
    except Refused as refused:
        if refused.status in (403, 404):
            return False
        raise
    return True


def scope_of(thing: PanelAnswer | SuiteAnswer, scopes: dict[str | None, Scope]) -> Scope | None:
    if thing.get("team") is not None:
        return scopes.get(thing["team"])
    if thing.get("owner") is None:
        return scopes.get(None)
    return None  # someone's own, outside any team


def budget_of(budget: BudgetAnswer, panel_names: dict[int, str]) -> Stored[Budget]:
    usd, tokens = budget.get("limit_usd"), budget.get("limit_tokens")
    if usd is not None:
        spec: Budget = {"period": budget["period"], "limit": usd, "unit": "usd"}
    elif tokens is not None:
        spec = {"period": budget["period"], "limit": tokens, "unit": "tokens"}
    else:  # the server keeps exactly one (a constraint of its table)
        raise RequestFailed(f"GET /api/budgets/ answered budget {budget['id']} with no limit.")
    panel, user = budget.get("panel"), budget.get("user")
    if panel is not None:
        spec["panel"] = budget.get("panel_name") or panel_names.get(panel, "")
    elif user is not None:
        spec["user"] = user
    extra: Extra = {"team": budget.get("team"), "user": user, "panel": panel}
    return Stored(budget["id"], budget["etag"], spec, extra)


def user_budget_key(spec: Budget) -> tuple[object, ...]:
    """What tells a member's budgets apart, across teams: the member, period and unit."""
    return (spec.get("user"), spec["period"], spec["unit"])


def budget_key(spec: Budget) -> tuple[object, ...]:
    """What tells a team's budgets apart: whose (the team, a panel, a user), the period and
    the unit."""
    panel = comparable(spec["panel"]) if "panel" in spec else None
    return (panel, spec.get("user"), spec["period"], spec["unit"])


def same_limit(one: float, other: float) -> bool:
    return bool(Decimal(str(one)) == Decimal(str(other)))


def suite_cases(jsonl: str) -> list[JsonObject]:
    """A suite's cases as compared: their texts as the server keeps them (names.settled:
    content that ends in a line break is stored without it), optional fields left out
    when empty, as the server writes them."""
    cases = []
    for line in jsonl.split("\n"):
        if line.strip():
            parsed: JsonObject = json.loads(line)  # checked against schema.SUITE_CASE
            case = {key: settled(value) for key, value in parsed.items()}
            cases.append({k: v for k, v in case.items() if SUITE_OPTIONAL.get(k, 0) != v})
    return cases


def settled(value: JsonValue) -> JsonValue:
    """A case's text (or list of texts: its tags) as the server stores it."""
    if isinstance(value, str):
        return names.settled(value)
    if isinstance(value, list):
        return [settled(item) for item in value]
    return value


def as_directory(state: ServerState) -> DirectoryState:
    """What an export writes: the server's state in the shape writing.write takes."""
    written: DirectoryState = {"teams": {}}
    if None in state.scopes:
        written["examples"] = scope_files(state.scopes[None])
    members = {name: team.spec["members"] for name, team in state.teams.items()}
    homes = state.user_budget_homes(members)
    for name in sorted(state.teams):
        budgets = state.team_budgets(name, homes)
        scope = scope_files(state.scopes[name])
        team: TeamSpec = {
            "members": members[name],
            "budgets": [budget.spec for budget in sorted(budgets, key=lambda b: b.id)],
            "panels": scope["panels"],
            "suites": scope["suites"],
        }
        slack = state.teams[name].spec.get("slack")
        if slack is not None:
            team["slack"] = {
                "channel": slack["channel"],
                "direct_messages": slack["direct_messages"],
            }
        written["teams"][name] = team
    return written


def members_of(team: TeamAnswer) -> Members:
    found: Members = {"members": sorted(team["members"])}
    slack = team.get("slack")
    if slack is not None:
        found["slack"] = slack
    return found


def scope_files(scope: Scope) -> ScopeSpec:
    return {
        "panels": [panel.spec for _, panel in sorted(scope.panels.items())],
        "suites": [suite.spec for _, suite in sorted(scope.suites.items())],
    }
