"""What the API's Slack routes take and answer (api/slack_endpoints.py): a team's Slack
connection, its secrets write-only (taken, never answered)."""

from datetime import datetime
from typing import Annotated, ClassVar

from pydantic import Field, StrictBool, StrictStr

from judgements import models
from judgements.configuration.slack_config import SlackFields, fingerprint, interactivity_url
from judgements.intake import schemas
from judgements.outcome.answers import Answer


class SlackWrite(schemas.Strict):
    """Where a team's held verdicts go in Slack, and the app's secrets (write-only: left
    out or empty, the ones set stay)."""

    WHOLE: ClassVar = (
        "body",
        'Must be a JSON object: {"channel", "direct_messages", "bot_token", "signing_secret"}.',
    )

    channel: Annotated[StrictStr, Field(max_length=40)] = Field(
        default="", description="A channel's ID (C0123ABCD); empty with direct_messages."
    )
    direct_messages: StrictBool = Field(
        default=False, description="Each reviewer gets a direct message instead of a channel."
    )
    bot_token: Annotated[StrictStr, Field(max_length=255)] | None = Field(
        default=None, description="The app's Bot User OAuth Token (xoxb-…); never answered."
    )
    signing_secret: Annotated[StrictStr, Field(max_length=255)] | None = Field(
        default=None, description="The app's Signing Secret; never answered."
    )

    def fields(self) -> SlackFields:
        found = SlackFields(channel=self.channel, direct_messages=self.direct_messages)
        if self.bot_token:
            found["bot_token"] = self.bot_token
        if self.signing_secret:
            found["signing_secret"] = self.signing_secret
        return found


class SlackConnection(Answer):
    """A team's Slack connection as it may be shown: never its secrets, only that they
    are set; what Slack last said (a refused token shows here)."""

    team: str
    channel: str
    direct_messages: bool
    bot_token_set: bool
    signing_secret_set: bool
    interactivity_url: str = Field(description="The Slack app's Interactivity Request URL.")
    last_ok_at: datetime | None
    last_error: str = Field(description="Slack's last refusal that no retry mends; empty: none.")
    last_error_at: datetime | None

    @classmethod
    def from_record(cls, connection: models.SlackConnection) -> "SlackConnection":
        return cls(
            team=connection.team.name,
            channel=connection.channel,
            direct_messages=connection.direct_messages,
            bot_token_set=bool(connection.bot_token),
            signing_secret_set=bool(connection.signing_secret),
            interactivity_url=interactivity_url(),
            last_ok_at=connection.last_ok_at,
            last_error=connection.last_error,
            last_error_at=connection.last_error_at,
        )


class TeamSlack(Answer):
    """A team's Slack connection as a team's answer (and `magi export`) shows it: where it
    posts, and a fingerprint of each secret (as the audit records it), so `magi plan`
    tells whether the secrets it would send are the ones set without reading them."""

    channel: str
    direct_messages: bool
    bot_token: str = Field(description="sha256: and the first 12 hex digits of its hash.")
    signing_secret: str = Field(description="sha256: and the first 12 hex digits of its hash.")

    @classmethod
    def of(cls, connection: models.SlackConnection | None) -> "TeamSlack | None":
        if connection is None:
            return None
        return cls(
            channel=connection.channel,
            direct_messages=connection.direct_messages,
            bot_token=fingerprint(connection.bot_token),
            signing_secret=fingerprint(connection.signing_secret),
        )


class SlackTest(Answer):
    ok: bool
    lines: list[str]
