"""What Slack sends about a click, read as MAGI reads it (judgements/outcome/
slack_payloads.py): the payloads as Slack documents them (tests/support/slack_requests.py),
the keys MAGI does not read ignored, and what it does read required."""

import json

import pytest
from pydantic import ValidationError

from judgements.outcome.slack_payloads import BlockActions, UserInfo, ViewSubmission
from tests.support.slack_requests import block_action, override_submission
from tests.support.slack_server import TEAM_ID


def test_a_button_press_reads_who_clicked_what_where():
    read = BlockActions.model_validate(block_action(12, "magi_confirm", "U0BOB", ts="1.5"))
    assert (read.actions[0].action_id, str(read.actions[0].value)) == ("magi_confirm", "12")
    assert (read.user.id, read.workspace(), read.message_ts()) == ("U0BOB", TEAM_ID, "1.5")
    assert read.trigger_id == "trigger-U0BOB-12"


def test_where_slack_leaves_a_part_out_its_other_part_says_it():
    sent = block_action(12, "magi_confirm", "U0BOB", channel="C0HELD", ts="2.5")
    for key in ("channel", "message"):
        del sent[key]
    del sent["user"]["team_id"]
    read = BlockActions.model_validate(sent)
    assert (read.channel_id(), read.message_ts(), read.workspace()) == ("C0HELD", "2.5", TEAM_ID)


def test_a_press_without_an_action_is_no_press():
    with pytest.raises(ValidationError):
        BlockActions.model_validate({**block_action(12, "magi_confirm", "U0BOB"), "actions": []})


def test_a_submitted_modal_reads_its_target_and_reason():
    read = ViewSubmission.model_validate(override_submission(12, "U0CY", "Wrong call."))
    target = read.target()
    assert (target.judgement, read.text("reason"), read.workspace()) == (12, "Wrong call.", TEAM_ID)


def test_a_modal_without_the_input_or_with_foreign_metadata_is_refused():
    sent = override_submission(12, "U0CY", "Wrong call.")
    sent["view"]["state"] = None
    with pytest.raises(KeyError):
        ViewSubmission.model_validate(sent).text("reason")
    sent["view"]["private_metadata"] = json.dumps({"judgement": "twelve"})
    with pytest.raises(ValidationError):
        ViewSubmission.model_validate(sent).target()


@pytest.mark.parametrize(
    ("user", "email"),
    [
        ({"profile": {"email": "bob@example.org"}, "is_email_confirmed": True}, "bob@example.org"),
        ({"profile": {"email": "bob@example.org"}}, "bob@example.org"),
        ({"profile": {"email": "bob@example.org"}, "is_email_confirmed": False}, None),
        ({"profile": {"email": "bob@example.org"}, "deleted": True}, None),
        ({"profile": {"email": "bot@example.org"}, "is_bot": True}, None),
        ({"profile": {"email": ""}}, None),
        ({"profile": {}}, None),
        ({}, None),
    ],
)
def test_an_email_counts_only_when_slack_vouches_for_a_living_person(user, email):
    assert UserInfo.model_validate({"id": "U0BOB", **user}).verified_email() == email
