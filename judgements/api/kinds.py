"""Every kind of configuration the API serves, one class each, registered in this order
(api/resources.py): saved panels, budgets, teams, suites, users and tokens. Each says what
its routes document and which of its area's functions make its changes; the routes,
the batch and the transaction a dry run rolls back are the registry's.

    panels   /api/panels/    configuration/panel_config.py   (and GET /api/models/)
    budgets  /api/budgets/   configuration/budget_config.py  staff
    teams    /api/teams/     configuration/team_config.py    staff, or a member
    suites   /api/suites/    configuration/suite_config.py   JSONL; GET <id>.jsonl
    users    /api/users/     configuration/people.py         staff; made, never changed here
    tokens   /api/tokens/    configuration/people.py         staff; the key shown once
"""

from urllib.parse import urlsplit

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Router

from judgements.api import config_schemas, evaluation_schemas, schemas, suite_endpoints
from judgements.api.changes import (
    Refusals,
    change_by,
    delete_answers,
    in_transaction,
    write_refusals,
)
from judgements.api.resources import Argument, Resource, Route, Sent, register
from judgements.configuration import (
    budget_config,
    panel_config,
    people,
    saving,
    slack_config,
    suite_config,
    team_config,
)
from judgements.core.errors import InvalidInput
from judgements.evaluations import answers as run_answers
from judgements.infrastructure.database import db_call
from judgements.llm import providers
from judgements.models import ApiToken, Budget, Team
from judgements.models import Suite as SuiteRow
from judgements.outcome import panel_answers
from judgements.outcome.panel_answers import Panel
from judgements.spending import budgets

STAFF_ERRORS: Refusals = {(400, 422): schemas.Invalid, (401, 403, 413): schemas.Error}


@register
class Panels(Resource[config_schemas.PanelWrite, saving.Written, config_schemas.PanelChange]):
    kind, plural = "panel", "panels"
    read_answer, list_answer = Panel, schemas.PanelList
    routes = {
        "list": Route("The saved panels a case may name, each whole with its ETag: the caller's "
                      "own, their\nteams' and the examples (staff: every panel), the caller's "
                      "first."),
        "create": Route("Create a panel owned by the caller: 201, its Location and ETag. 422 "
                        "names each field\nat fault (`name`, `agents[1].model`, `reviewers`, "
                        "`team`)."),
        "read": Route("One panel, whole, with its ETag (the header and `etag`)."),
        "replace": Route("Make the panel exactly as the body says (a field left out: its "
                         "default). Changing\nan agent's model or criteria voids its "
                         "certificates: `voided_certificates` says which."),
        "delete": Route("Delete the panel; the judgements started from it keep their copy of "
                        "its agents."),
    }  # fmt: skip

    def made(self, token: ApiToken, body: config_schemas.PanelWrite) -> saving.Written:
        return panel_config.create(change_by(token), body.fields())

    def changed(
        self, token: ApiToken, pk: int, body: config_schemas.PanelWrite, if_match: str
    ) -> saving.Written:
        return panel_config.replace(change_by(token, if_match), pk, body.fields())

    def removed(self, token: ApiToken, pk: int, if_match: str) -> None:
        panel_config.delete(change_by(token, if_match), pk)

    def answer_of(self, record: saving.Written) -> config_schemas.PanelChange:
        answer = Panel.from_record(record.panel).model_dump()
        return config_schemas.PanelChange(**answer, voided_certificates=record.voided)

    def listing(self, token: ApiToken) -> list[Panel]:
        return panel_answers.listing(token.user)

    def read(self, token: ApiToken, pk: int) -> Panel:
        return Panel.from_record(panel_config.visible_panel(pk, token.user))

    def more_routes(self, router: Router) -> None:
        """GET /api/models/: what a panel's agents may name."""
        router.get(
            "/models/", url_name="api-models", response={200: schemas.ModelList, 401: schemas.Error}
        )(list_models)


@register
class Budgets(Resource[config_schemas.BudgetWrite, Budget, schemas.Budget]):
    kind, plural, list_answer = "budget", "budgets", schemas.BudgetList
    routes = {
        "list": Route("The spending limits the caller may read (their own, their teams' and "
                      "those of the\npanels they may use; staff: all), with what each has "
                      "spent and has left."),
        "create": Route("Staff: a budget for a team, a user or a panel (by name; a panel by id "
                        "or name)."),
        "read": Route("One budget, with what it has spent and its ETag."),
        "replace": Route("Staff: make the budget exactly as the body says."),
        "delete": Route("Staff: remove the budget."),
    }  # fmt: skip

    def made(self, token: ApiToken, body: config_schemas.BudgetWrite) -> Budget:
        return budget_config.create(token.user, body.fields())

    def changed(
        self, token: ApiToken, pk: int, body: config_schemas.BudgetWrite, if_match: str
    ) -> Budget:
        return budget_config.replace(token.user, pk, body.fields(), if_match)

    def removed(self, token: ApiToken, pk: int, if_match: str) -> None:
        budget_config.delete(token.user, pk, if_match)

    def answer_of(self, record: Budget) -> schemas.Budget:
        return schemas.Budget.from_state(budgets.state_of(record))

    def listing(self, token: ApiToken) -> list[schemas.Budget]:
        return [
            self.answer_of(found) for found in budget_config.visible_to(token.user).order_by("pk")
        ]

    def read(self, token: ApiToken, pk: int) -> schemas.Budget:
        return self.answer_of(budget_config.visible_budget(pk, token.user))


@register
class Teams(Resource[config_schemas.TeamWrite, Team, config_schemas.Team]):
    kind, plural, list_answer = "team", "teams", config_schemas.TeamList
    routes = {
        "list": Route("The teams the caller is in (staff: every team), each with its members "
                      "and ETag."),
        "create": Route("Staff: a team and its members."),
        "read": Route("One team the caller is in (staff: any), with its ETag."),
        "replace": Route("Its members, all of them (staff or a member; only staff rename it, "
                         "and a member\nmay not take themselves out). A reviewer taken out "
                         "stops reviewing its panels."),
        "delete": Route("Staff: delete the team; its panels, suites and tokens stay their "
                        "owners'."),
    }  # fmt: skip

    def made(self, token: ApiToken, body: config_schemas.TeamWrite) -> Team:
        return connected(token, team_config.create(token.user, body.fields()), body)

    def changed(
        self, token: ApiToken, pk: int, body: config_schemas.TeamWrite, if_match: str
    ) -> Team:
        return connected(token, team_config.replace(token.user, pk, body.fields(), if_match), body)

    def removed(self, token: ApiToken, pk: int, if_match: str) -> None:
        team_config.delete(token.user, pk, if_match)

    def answer_of(self, record: Team) -> config_schemas.Team:
        return config_schemas.Team.from_record(record)

    def listing(self, token: ApiToken) -> list[config_schemas.Team]:
        return [self.answer_of(team) for team in team_config.visible_teams(token.user)]

    def read(self, token: ApiToken, pk: int) -> config_schemas.Team:
        return self.answer_of(team_config.visible_team(pk, token.user))


@register
class Suites(Resource[suite_config.Upload, SuiteRow, run_answers.Suite]):
    """A suite is sent as its JSONL, its name, description and team in the query
    (suite_config.Upload); GET <id>.jsonl sends it back. In use by a run, a change
    answers 409."""

    kind, plural, list_answer = "suite", "suites", evaluation_schemas.SuiteList
    replaced_at, tag = ".jsonl", "evaluations"
    routes = {
        "list": Route("The suites the caller may run: their own, their teams' and the "
                      "shipped ones."),
        "create": Route("Import a suite: the body is JSONL, one case a line. 422 names the "
                        "line and field\nat fault (\"line 4.expected\").", name="import_suite"),
        "read": Route("The suite, its cases counted (GET its .jsonl for them), with its ETag."),
        "replace": Route("Make the suite exactly this JSONL, name, description and team. 409 "
                         "when runs were\nmade on it and the cases differ: their reports point "
                         "at its cases."),
        "delete": Route("Delete the suite; 409 once evaluation runs were made on it."),
    }  # fmt: skip

    def made(self, token: ApiToken, body: suite_config.Upload) -> SuiteRow:
        return suite_config.create(change_by(token), body)

    def changed(
        self, token: ApiToken, pk: int, body: suite_config.Upload, if_match: str
    ) -> SuiteRow:
        return suite_config.replace(change_by(token, if_match), pk, body)

    def removed(self, token: ApiToken, pk: int, if_match: str) -> None:
        suite_config.delete(change_by(token, if_match), pk)

    def listing(self, token: ApiToken) -> list[run_answers.Suite]:
        return suite_endpoints.suite_listing(token.user)

    def answer_of(self, record: SuiteRow) -> run_answers.Suite:
        return run_answers.Suite.from_record(record)

    def read(self, token: ApiToken, pk: int) -> run_answers.Suite:
        return self.answer_of(suite_config.visible_suite(pk, token.user))

    def write_argument(self) -> Argument:
        return suite_endpoints.QUERY

    def body_document(self) -> dict[str, object]:
        return suite_endpoints.JSONL_BODY

    def write_of(self, sent: Sent) -> suite_config.Upload:
        return suite_endpoints.upload_of(sent.request, sent.written(suite_endpoints.SuiteQuery))

    def from_batch(
        self, operation: config_schemas.BatchOperation, prefix: str
    ) -> suite_config.Upload:
        return suite_endpoints.upload_in_batch(
            operation.body, urlsplit(operation.path).query, prefix
        )

    def write_refusals(self) -> Refusals:
        return write_refusals(409)

    def delete_answers(self) -> Refusals:
        return delete_answers(409)

    def location(self, made: run_answers.Suite) -> str:
        return made.export

    def more_routes(self, router: Router) -> None:
        suite_endpoints.add_export(router)


@register
class Users(Resource[config_schemas.UserCreate, User, config_schemas.UserAnswer]):
    """Staff make users here; a user is changed by its owner or in the admin."""

    kind, plural, list_answer = "user", "users", config_schemas.UserList
    versioned = False
    routes = {
        "list": Route("Staff: every user, with their email address and teams."),
        "create": Route("Staff: a user with an email address and no password (a person sets "
                        "one with\n`manage.py changepassword`; a bot uses a token)."),
    }  # fmt: skip

    def made(self, token: ApiToken, body: config_schemas.UserCreate) -> User:
        return people.create_user(token.user, body.username, body.email, body.is_staff)

    def answer_of(self, record: User) -> config_schemas.UserAnswer:
        return config_schemas.UserAnswer.from_record(record)

    def location(self, made: config_schemas.UserAnswer) -> str:
        return self.collection

    def listing(self, token: ApiToken) -> list[config_schemas.UserAnswer]:
        return [self.answer_of(user) for user in people.listing(token.user)]

    def list_refusals(self) -> Refusals:
        return {(401, 403): schemas.Error}

    def write_refusals(self) -> Refusals:
        return STAFF_ERRORS


@register
class Tokens(Resource[config_schemas.TokenCreate, people.Issued, config_schemas.TokenIssued]):
    """Staff issue a user's (or a team's) token; its key is in the answer alone."""

    kind, plural = "token", "tokens"
    versioned = False
    routes = {
        "create": Route("Staff: an API token of a user's, a team's when `team` is given (what "
                        "it starts is\nthe team's). The key is in this answer only (a dry "
                        "run's is empty: nothing issued)."),
    }  # fmt: skip

    def create(
        self, token: ApiToken, body: config_schemas.TokenCreate, dry_run: bool
    ) -> config_schemas.TokenIssued:
        def issue() -> config_schemas.TokenIssued:
            issued = people.issue_token(token.user, body.user, body.name, body.team)
            made = issued.token
            # A dry run issues nothing: no key to show, not even one that would not work.
            return config_schemas.TokenIssued(
                id=made.pk, name=made.name, prefix=made.prefix, user=body.user, team=body.team,
                key="" if dry_run else issued.key,
            )  # fmt: skip

        return in_transaction(dry_run, issue)

    def location(self, made: config_schemas.TokenIssued) -> None:
        return None

    def write_refusals(self) -> Refusals:
        return STAFF_ERRORS


def connected(token: ApiToken, team: Team, body: config_schemas.TeamWrite) -> Team:
    """The team's Slack connection set as the body says (left out: as it is), by the
    page's and PUT /api/teams/{id}/slack's one function, in the change's transaction; a
    bad field is named under `slack.`."""
    if body.slack is None:
        return team
    try:
        slack_config.save(token.user, team, body.slack.fields())
    except InvalidInput as exc:
        raise InvalidInput({f"slack.{at}": said for at, said in exc.errors.items()}) from None
    return team


def model_listing() -> list[str]:
    return providers.available_models()


async def list_models(request: HttpRequest) -> schemas.ModelList:
    """The models this deployment can reach: what a panel's agents may name."""
    # In a thread: the first look at a discovering provider asks it (bounded by
    # MAGI_DISCOVERY_TIMEOUT), as the panel form's does.
    return schemas.ModelList(models=await db_call(model_listing, for_request=True)())
