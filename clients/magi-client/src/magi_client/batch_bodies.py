"""What `magi apply` sends: each operation of a batch as POST /api/batch/ takes it, and
the body of each kind of operation as the API's POST and PUT take it (plan.py makes them,
config.py splits them into batches). A suite's body is its cases as JSONL text."""

from typing import NotRequired, TypedDict

from magi_client.directory import Panel, Slack


class BudgetBody(TypedDict, total=False):
    """A budget as POST and PUT /api/budgets/ take it: whose (a team, a user, a panel by id
    or, made in the same batch, by name and team), its period and one limit."""

    team: str
    user: str
    panel: int | str
    panel_team: str
    period: str
    limit_usd: float
    limit_tokens: float


class TeamBody(TypedDict):
    """A team as POST and PUT /api/teams/ take it, its Slack connection only when it changes."""

    name: str
    members: list[str]
    slack: NotRequired[Slack]


class TeamPanel(Panel):
    """A team's panel as POST and PUT /api/panels/ take it."""

    team: str


class ExamplePanel(Panel):
    """A shared panel as POST and PUT /api/panels/ take it: an example."""

    example: bool


OperationBody = TeamBody | TeamPanel | ExamplePanel | BudgetBody | str | None  # a suite's: JSONL


class SentOperation(TypedDict):
    """One operation of a batch as POST /api/batch/ takes it."""

    method: str
    path: str
    body: OperationBody
    if_match: NotRequired[str]
