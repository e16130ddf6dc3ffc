"""A plan: what makes the server match a configuration directory, as the changes a person
reads (create, change field by field with the certificates a change voids, delete) and
the operations of one `POST /api/batch/` that carry them out in one transaction.

Objects are matched by name as MAGI compares names (case and spacing aside): a team by
its name, a panel or a suite by its team and name, a budget by whose it is (the team, one
of its panels, one of its members), its period and its unit. A renamed panel is a
deletion and a creation. Without --prune nothing is deleted: what the server holds and
the directory does not is listed as left alone.
"""

import hashlib
import urllib.parse
from dataclasses import dataclass, field
from typing import TypedDict, TypeVar

from magi_client.batch_bodies import (
    BudgetBody,
    ExamplePanel,
    OperationBody,
    SentOperation,
    TeamBody,
    TeamPanel,
)
from magi_client.directory import (
    Budget,
    DirectoryState,
    Panel,
    ScopeSpec,
    Slack,
    TeamSpec,
    comparable,
    escalation_order,
)
from magi_client.json_values import JsonObject
from magi_client.server_state import (
    Scope,
    ServerState,
    SlackAnswer,
    Stored,
    budget_key,
    same_limit,
    suite_cases,
    user_budget_key,
)


class Difference(TypedDict):
    """One field a change changes, as `magi plan` shows it (null: not there)."""

    field: str  # `agents[1].criteria`, `cases[c1]`
    before: object  # a value of the directory's shapes (JSON)
    after: object


Fields = list[Difference]


class ChangeJson(TypedDict):
    """A change as `magi plan --json` prints it."""

    action: str
    what: str
    fields: Fields
    voids: list[str]


class PlanJson(TypedDict):
    """A plan as `magi plan --json` prints it (config.plan_lines reads it too)."""

    changes: list[ChangeJson]
    left_alone: list[str]


class TeamShown(TypedDict, total=False):
    """A team's fields as a plan compares them (none: not on the server yet)."""

    members: list[str]
    slack: SlackAnswer | None


@dataclass
class Change:
    action: str  # create, change, delete
    what: str  # "panel payments/deploy gate"
    fields: Fields = field(default_factory=list)
    voids: list[str] = field(default_factory=list)

    def as_json(self) -> ChangeJson:
        return {
            "action": self.action,
            "what": self.what,
            "fields": self.fields,
            "voids": self.voids,
        }


@dataclass
class Operation:
    """One operation of the batch, and where in the directory its fields came from (an
    address of Directory.sources, and how the API's field paths read there)."""

    method: str
    path: str
    body: OperationBody
    if_match: str | None = None
    address: str = ""
    fields: dict[str, str] = field(default_factory=dict)

    def as_json(self) -> SentOperation:
        sent: SentOperation = {"method": self.method, "path": self.path, "body": self.body}
        if self.if_match:
            sent["if_match"] = self.if_match
        return sent

    def field_address(self, api_field: str) -> str:
        """The directory address of a field the server names in this operation's body."""
        for prefix, local in self.fields.items():
            if api_field == prefix or api_field.startswith(prefix + "."):
                return self.address + local + api_field[len(prefix) :]
        return f"{self.address}.{api_field}" if api_field else self.address


@dataclass
class Plan:
    changes: list[Change] = field(default_factory=list)
    operations: list[Operation] = field(default_factory=list)
    deletions: list[Operation] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)

    def as_json(self) -> PlanJson:
        return {
            "changes": [change.as_json() for change in self.changes],
            "left_alone": self.left_alone,
        }

    def batch(self) -> list[Operation]:
        return self.operations + self.deletions


def differences(before: object, after: object, path: str = "") -> Fields:
    """Field by field: `agents[1].criteria` rather than the whole list of agents."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: Fields = []
        for key in [*before, *[k for k in after if k not in before]]:
            at = f"{path}.{key}" if path else key
            found += differences(before.get(key), after.get(key), at)
        return found
    if (
        isinstance(before, list)
        and isinstance(after, list)
        and len(before) == len(after)
        and all(isinstance(item, dict) for item in before + after)
    ):
        found = []
        for index, (one, other) in enumerate(zip(before, after, strict=True)):
            found += differences(one, other, f"{path}[{index}]")
        return found
    return [] if before == after else [{"field": path, "before": before, "after": after}]


def fingerprint(panel: Panel) -> tuple[list[tuple[str, str]], list[str]]:
    """What a certificate measured: each agent's model and criteria, in order, and the
    prompt variants (a setting left out counted as none: the server's answer says what
    it voided)."""
    agents = [(agent["model"], agent["criteria"]) for agent in panel["agents"]]
    return agents, sorted(panel.get("prompt_variants") or [])


def make(desired: DirectoryState, server: ServerState, prune: bool) -> Plan:
    plan = Plan()
    if "examples" in desired:
        scope = server.scopes.get(None, Scope())
        plan_scope(plan, desired["examples"], scope, None, "examples", prune)
    homes = budget_homes(desired, server)
    for team, spec in sorted(desired["teams"].items()):
        plan_team(plan, team, spec, server, prune, homes)
    return plan


def budget_homes(desired: DirectoryState, server: ServerState) -> dict[int, str]:
    """Which of the directory's teams describes each member's budget on the server: the
    one whose team.yaml lists it, or else the one an export writes it in."""
    members: dict[str, list[str]] = {}
    listed: dict[tuple[object, ...], str] = {}
    for team, spec in sorted(desired["teams"].items()):
        stored = server.teams.get(team)
        members[team] = spec.get("members", stored.spec["members"] if stored else [])
        for budget in spec.get("budgets", []):
            if "user" in budget:
                listed.setdefault(user_budget_key(budget), team)
    return server.user_budget_homes(members, listed)


# Where a refusal of a team's field is told in team.yaml: a secret at the variable naming it.
TEAM_FIELDS = {
    "members": ".members",
    "slack.bot_token": ".slack.bot_token_env",
    "slack.signing_secret": ".slack.signing_secret_env",
    "slack": ".slack",
}


def slack_shown(stored: SlackAnswer | None, wanted: Slack) -> SlackAnswer:
    """A Slack connection as a plan shows it: each secret by its fingerprint (the server's
    answer gives no more), a secret the file leaves out as the one set."""
    kept = stored or {"bot_token": "", "signing_secret": ""}
    bot_token, signing_secret = wanted.get("bot_token"), wanted.get("signing_secret")
    return {
        "channel": wanted["channel"],
        "direct_messages": wanted["direct_messages"],
        "bot_token": secret_fingerprint(bot_token) if bot_token else kept["bot_token"],
        "signing_secret": (
            secret_fingerprint(signing_secret) if signing_secret else kept["signing_secret"]
        ),
    }


def secret_fingerprint(secret: str) -> str:
    """As the server fingerprints a secret (judgements/configuration/slack_config.py)."""
    return "sha256:" + hashlib.sha256(secret.encode()).hexdigest()[:12]


def plan_team(
    plan: Plan,
    team: str,
    spec: TeamSpec,
    server: ServerState,
    prune: bool,
    homes: dict[int, str],
) -> None:
    address = f"teams.{team}"
    stored = server.teams.get(team)
    members = spec.get("members")
    before: TeamShown = {} if stored is None else {"members": stored.spec["members"]}
    kept = members if members is not None else before.get("members", [])
    after: TeamShown = {"members": kept}
    body: TeamBody = {"name": team, "members": kept}
    slack = spec.get("slack")
    if slack is not None:
        was = None if stored is None else stored.spec.get("slack")
        before["slack"] = was
        after["slack"] = slack_shown(was, slack)
        if after["slack"] != before["slack"]:
            body["slack"] = slack
    fields = differences(before, after)
    if stored is None:
        plan.changes.append(Change("create", f"team {team}", fields))
        plan.operations.append(Operation("POST", "/api/teams/", body, None, address, TEAM_FIELDS))
    elif fields:
        plan.changes.append(Change("change", f"team {team}", fields))
        plan.operations.append(
            Operation("PUT", f"/api/teams/{stored.id}/", body, stored.etag, address, TEAM_FIELDS)
        )
    plan_scope(plan, spec, server.scopes.get(team, Scope()), team, address, prune)
    if "budgets" in spec:
        plan_budgets(plan, team, spec["budgets"], server.team_budgets(team, homes), server, prune)


def plan_scope(
    plan: Plan, spec: ScopeSpec, scope: Scope, team: str | None, address: str, prune: bool
) -> None:
    where = f"{team}/" if team else ""
    # Each after the panel it escalates to: the batch creates that one first.
    ordered = escalation_order(spec.get("panels", []))
    wanted = {comparable(panel["name"]): panel for panel in ordered}
    for key, panel in wanted.items():
        at = f"{address}.panels.{panel['name']}"
        # A shared panel (no team) is an example: staff make and change them as such.
        body: TeamPanel | ExamplePanel = (
            {**panel, "team": team} if team else {**panel, "example": True}
        )
        stored = scope.panels.get(key)
        if stored is None:
            plan.changes.append(Change("create", f"panel {where}{panel['name']}"))
            plan.operations.append(Operation("POST", "/api/panels/", body, None, at))
            continue
        changed = differences(stored.spec, panel)
        if changed:
            voids = []
            if fingerprint(stored.spec) != fingerprint(panel):
                voids = [f"certificate {c}" for c in stored.extra.get("certificates", [])]
            plan.changes.append(Change("change", f"panel {where}{panel['name']}", changed, voids))
            plan.operations.append(
                Operation("PUT", f"/api/panels/{stored.id}/", body, stored.etag, at)
            )
    for key, stored in sorted(scope.panels.items()):
        if key not in wanted:
            delete(
                plan,
                f"panel {where}{stored.spec['name']}",
                f"/api/panels/{stored.id}/",
                stored,
                prune,
            )
    plan_suites(plan, spec, scope, team, address, prune)


def plan_suites(
    plan: Plan, spec: ScopeSpec, scope: Scope, team: str | None, address: str, prune: bool
) -> None:
    where = f"{team}/" if team else ""
    wanted = {comparable(suite["name"]): suite for suite in spec.get("suites", [])}
    for key, suite in wanted.items():
        at = f"{address}.suites.{suite['name']}"
        stored = scope.suites.get(key)
        query = {"name": suite["name"], **({"team": team} if team else {"example": "true"})}
        if stored is None:
            path = f"/api/suites/?{urllib.parse.urlencode(query | {'description': ''})}"
            plan.changes.append(Change("create", f"suite {where}{suite['name']}"))
            plan.operations.append(Operation("POST", path, suite["cases"], None, at))
            continue
        before, after = suite_cases(stored.spec["cases"]), suite_cases(suite["cases"])
        if before != after:
            description = stored.extra.get("description", "")
            described = urllib.parse.urlencode(query | {"description": description})
            path = f"/api/suites/{stored.id}.jsonl?{described}"
            plan.changes.append(
                Change("change", f"suite {where}{suite['name']}", case_differences(before, after))
            )
            plan.operations.append(Operation("PUT", path, suite["cases"], stored.etag, at))
    for key, stored in sorted(scope.suites.items()):
        if key not in wanted:
            delete(
                plan,
                f"suite {where}{stored.spec['name']}",
                f"/api/suites/{stored.id}/",
                stored,
                prune,
            )


def case_differences(before: list[JsonObject], after: list[JsonObject]) -> Fields:
    old = {case["id"]: case for case in before}
    new = {case["id"]: case for case in after}
    found: Fields = []
    for case_id in [*old, *[i for i in new if i not in old]]:
        if old.get(case_id) != new.get(case_id):
            found.append(
                {
                    "field": f"cases[{case_id}]",
                    "before": old.get(case_id),
                    "after": new.get(case_id),
                }
            )
    if not found:
        found.append({"field": "cases (order)", "before": list(old), "after": list(new)})
    return found


def budget_words(team: str, spec: Budget) -> str:
    whose = (
        f"panel {spec['panel']}"
        if "panel" in spec
        else f"user {spec['user']}"
        if "user" in spec
        else "the team"
    )
    return f"budget of {team}: {whose}, a {spec['period']}, in {spec['unit']}"


def budget_body(team: str, spec: Budget, server: ServerState) -> BudgetBody:
    if "panel" in spec:
        stored = server.scopes.get(team, Scope()).panels.get(comparable(spec["panel"]))
        # A panel made by this very batch has no id yet: its name, found in its team
        # (another team may have a panel of that name).
        body: BudgetBody = (
            {"panel": stored.id} if stored else {"panel": spec["panel"], "panel_team": team}
        )
    elif "user" in spec:
        body = {"user": spec["user"]}
    else:
        body = {"team": team}
    body["period"] = spec["period"]
    if spec["unit"] == "usd":
        body["limit_usd"] = spec["limit"]
    else:
        body["limit_tokens"] = spec["limit"]
    return body


def plan_budgets(
    plan: Plan,
    team: str,
    wanted: list[Budget],
    stored: list[Stored[Budget]],
    server: ServerState,
    prune: bool,
) -> None:
    by_key = {budget_key(budget.spec): budget for budget in stored}
    address = f"teams.{team}"
    for index, spec in enumerate(wanted):
        fields = {
            "limit_usd": ".limit",
            "limit_tokens": ".limit",
            "panel": ".panel",
            "panel_team": ".panel",
            "user": ".user",
            "team": "",
            "scope": "",
            "limit": ".limit",
        }
        at = f"{address}.budgets[{index}]"
        body = budget_body(team, spec, server)
        existing = by_key.pop(budget_key(spec), None)
        if existing is None:
            plan.changes.append(
                Change(
                    "create", budget_words(team, spec), differences({}, {"limit": spec["limit"]})
                )
            )
            plan.operations.append(Operation("POST", "/api/budgets/", body, None, at, fields))
        elif not same_limit(existing.spec["limit"], spec["limit"]):
            change = differences({"limit": existing.spec["limit"]}, {"limit": spec["limit"]})
            plan.changes.append(Change("change", budget_words(team, spec), change))
            plan.operations.append(
                Operation("PUT", f"/api/budgets/{existing.id}/", body, existing.etag, at, fields)
            )
    for existing in by_key.values():
        delete(
            plan, budget_words(team, existing.spec), f"/api/budgets/{existing.id}/", existing, prune
        )


SpecT = TypeVar("SpecT")


def delete(plan: Plan, what: str, path: str, stored: Stored[SpecT], prune: bool) -> None:
    if not prune:
        plan.left_alone.append(what)
        return
    plan.changes.append(Change("delete", what))
    # Deletions last, budgets before the panels they limit (the list is built in order).
    plan.deletions.insert(
        0 if what.startswith("budget") else len(plan.deletions),
        Operation("DELETE", path, None, stored.etag),
    )
