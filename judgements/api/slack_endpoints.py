"""A team's Slack connection over the API (docs/slack.md), for staff and the team's members:

GET    /api/teams/<id>/slack        how it is connected (never its secrets)
PUT    /api/teams/<id>/slack        connect it, or change how (secrets write-only)
DELETE /api/teams/<id>/slack        disconnect it
POST   /api/teams/<id>/slack/test   post the test message, and say what Slack said
"""

from typing import Annotated

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja import Path, Router
from ninja.responses import Status

from judgements.api import schemas, slack_schemas
from judgements.api.site import token_of
from judgements.configuration import slack_config
from judgements.core.errors import NotFound
from judgements.infrastructure.database import db_call
from judgements.outcome.answers import Answer

router = Router(tags=["teams"])
TeamId = Annotated[int, Path(description="A team's id.")]
ANSWERS: dict[int | tuple[int, int], type[Answer]] = {
    (400, 422): schemas.Invalid,
    (401, 404): schemas.Error,
}


def read(by: User, team_id: int) -> slack_schemas.SlackConnection:
    team = slack_config.team_for(by, team_id)
    connection = slack_config.connection_of(team)
    if connection is None:
        raise NotFound(f"The team {team.name} is not connected to Slack.")
    return slack_schemas.SlackConnection.from_record(connection)


def write(by: User, team_id: int, body: slack_schemas.SlackWrite) -> slack_schemas.SlackConnection:
    team = slack_config.team_for(by, team_id)
    return slack_schemas.SlackConnection.from_record(slack_config.save(by, team, body.fields()))


def remove(by: User, team_id: int) -> bool:
    return slack_config.remove(by, slack_config.team_for(by, team_id))


def test(by: User, team_id: int) -> slack_schemas.SlackTest:
    report = slack_config.send_test(slack_config.team_for(by, team_id))
    return slack_schemas.SlackTest(ok=report.ok, lines=report.lines)


@router.get(
    "/teams/{int:team_id}/slack",
    url_name="api-team-slack",
    response={200: slack_schemas.SlackConnection, **ANSWERS},
)
async def get_team_slack(request: HttpRequest, team_id: TeamId) -> slack_schemas.SlackConnection:
    """How the team is connected to Slack: its channel or direct messages, whether its
    secrets are set (never them), and Slack's last refusal. 404: not connected."""
    return await db_call(read, for_request=True)(token_of(request).user, team_id)


@router.put(
    "/teams/{int:team_id}/slack",
    url_name="api-team-slack",
    response={200: slack_schemas.SlackConnection, **ANSWERS},
)
async def put_team_slack(
    request: HttpRequest, team_id: TeamId, body: slack_schemas.SlackWrite
) -> slack_schemas.SlackConnection:
    """Connect the team to Slack or change how. The secrets are needed the first time;
    left out later, they stay as they are. Audited, without the secrets."""
    return await db_call(write, for_request=True)(token_of(request).user, team_id, body)


@router.delete(
    "/teams/{int:team_id}/slack",
    url_name="api-team-slack",
    response={204: None, **ANSWERS},
)
async def delete_team_slack(request: HttpRequest, team_id: TeamId) -> Status[None]:
    """Disconnect the team from Slack; its messages there stay as they are."""
    removed = await db_call(remove, for_request=True)(token_of(request).user, team_id)
    if not removed:
        raise NotFound(f"The team {team_id} is not connected to Slack.")
    return Status(204, None)


@router.post(
    "/teams/{int:team_id}/slack/test",
    url_name="api-team-slack-test",
    response={200: slack_schemas.SlackTest, **ANSWERS},
)
async def test_team_slack(request: HttpRequest, team_id: TeamId) -> slack_schemas.SlackTest:
    """Check the bot token and post a test message where held verdicts go; `ok` false and
    the lines say what failed."""
    return await db_call(test, for_request=True)(token_of(request).user, team_id)
