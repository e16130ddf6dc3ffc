"""What Slack sends when a reviewer clicks, as the shapes MAGI reads of it: a button
pressed on a held verdict's message (`block_actions`) and the override's modal submitted
(`view_submission`), as Slack documents its interaction payloads, and the user that
`users.info` answers about the clicker. Slack sends more than
MAGI reads; the rest is ignored. A payload without what MAGI reads is not an interaction
MAGI sent: validating it raises pydantic's ValidationError (a ValueError), which the
endpoint answers with 400 and nothing changed (outcome/slack_actions.py)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Read(BaseModel):
    """A part of a payload: what MAGI reads of it, the rest ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class Named(Read):
    """A workspace or a channel, by its id."""

    id: str | None = None


class SlackUser(Read):
    id: str
    team_id: str | None = None


class Container(Read):
    """Where the button was: the message's channel and timestamp."""

    channel_id: str | None = None
    message_ts: str | None = None


class Message(Read):
    ts: str | None = None


class Action(Read):
    """The button pressed: MAGI's buttons carry the judgement's id as their value."""

    action_id: str
    value: str | int


class FromUser(Read):
    """An interaction: who made it, in which workspace."""

    user: SlackUser
    team: Named = Named()

    def workspace(self) -> str:
        return self.user.team_id or self.team.id or ""


class BlockActions(FromUser):
    """A button pressed on a message MAGI posted."""

    type: Literal["block_actions"]
    actions: list[Action] = Field(min_length=1)
    channel: Named = Named()
    container: Container = Container()
    message: Message = Message()
    trigger_id: str = ""

    def channel_id(self) -> str:
        return self.channel.id or self.container.channel_id or ""

    def message_ts(self) -> str:
        return self.message.ts or self.container.message_ts or ""


class TextInput(Read):
    """An input's state: a text input's value (None when left empty)."""

    value: str | None = None


class ViewState(Read):
    """The modal's inputs, by block id, then by action id."""

    values: dict[str, dict[str, TextInput]]


class OverrideMetadata(Read):
    """What MAGI's override modal carries back as its private_metadata
    (slack_messages.OverrideTarget): the judgement and the message the click came from."""

    judgement: int
    channel: str
    ts: str


class View(Read):
    callback_id: str = ""
    private_metadata: str = ""
    state: ViewState | None = None


class ViewSubmission(FromUser):
    """A modal submitted."""

    type: Literal["view_submission"]
    view: View

    def target(self) -> OverrideMetadata:
        """The override's target, as MAGI's modal carries it."""
        return OverrideMetadata.model_validate_json(self.view.private_metadata)

    def text(self, block: str) -> str:
        """A text input's value; KeyError when the modal has no such input."""
        if self.view.state is None:
            raise KeyError(block)
        return self.view.state.values[block][block].value or ""


class Profile(Read):
    email: str | None = None


class UserInfo(Read):
    """`users.info`'s user: the email Slack has for them, and whether it vouches for it."""

    profile: Profile = Profile()
    is_email_confirmed: bool | None = None
    deleted: bool = False
    is_bot: bool = False

    def verified_email(self) -> str | None:
        """Their email, unless Slack says it is unconfirmed or they are gone or a bot."""
        if not self.profile.email or self.is_email_confirmed is False:
            return None
        return None if self.deleted or self.is_bot else self.profile.email
