"""A click in Slack is a review (judgements/outcome/slack_actions.py): interaction payloads
as Slack sends them, signed with Slack's published algorithm, posted to the app's
interactivity URL through its whole request stack; MAGI answers through its real
slack_sdk client and the suite's Slack Web API server on 127.0.0.1.

Each refusal is tried as its attacker would try it, and leaves the verdict, the message
and the records as they were."""

import time

import pytest

from judgements.models import (
    ChainEntry,
    Confirmation,
    EntryKind,
    Judgement,
    Override,
    Receipt,
    SlackLink,
    WebhookDelivery,
    WebhookSecret,
)
from judgements.outcome import slack_outbox
from tests.support.slack_requests import (
    block_action,
    connect,
    form_body,
    override_submission,
    post,
    post_body,
    signed_headers,
)
from tests.support.slack_server import Scripted
from tests.support.slack_team import SLACK_IDS, slack_team

pytestmark = pytest.mark.django_db(transaction=True)

CONFIRM, OVERRIDE = "magi_confirm", "magi_override"


@pytest.fixture
def setup(slack_api, fake_llm):
    found = slack_team(slack_api)
    connect(found.team)
    return found


@pytest.fixture
def posted(setup, slack_api, make_judgement, fake_llm, receiver):
    """A held verdict of ana's with a webhook, posted to the team's channel."""
    WebhookSecret.issue(setup.people["ana"])
    judgement = setup.held(make_judgement, fake_llm, callback_url=receiver.url)
    slack_outbox.deliver("w1")
    assert len(slack_api.calls("chat.postMessage")) == 1
    return judgement


def private_answers(slack_api, slack_user: str) -> list[str]:
    return [
        c.params["text"]
        for c in slack_api.calls("chat.postEphemeral")
        if c.params["user"] == slack_user
    ]


def unchanged(judgement: Judgement, slack_api) -> None:
    """Nothing a refusal may touch was touched: no review, the verdict still held, the
    message as posted."""
    assert not Confirmation.objects.filter(judgement=judgement).exists()
    assert not Override.objects.filter(judgement=judgement).exists()
    assert Judgement.objects.get(pk=judgement.pk).verdict == "held"
    assert slack_api.calls("chat.update") == []


def blocks_text(call) -> str:
    return "\n".join(str(block) for block in call.params["blocks"])


# --- the reviews ---------------------------------------------------------------------


def test_a_reviewers_confirm_puts_the_verdict_in_force_as_the_page_would(
    posted, setup, slack_api, client
):
    response = post(client, block_action(posted.pk, CONFIRM, SLACK_IDS["bob"]))

    assert response.status_code == 200
    confirmation = Confirmation.objects.get(judgement=posted)
    assert confirmation.by == setup.people["bob"] and confirmation.panel_status == "approved"
    judgement = Judgement.objects.get(pk=posted.pk)
    assert judgement.verdict == "approved"
    # The audit log, the receipt and the webhook, as a review on the page leaves them.
    entry = ChainEntry.objects.get(judgement=posted, kind=EntryKind.CONFIRMATION)
    assert Receipt.objects.filter(judgement_id=posted.pk, entry=entry).exists()
    assert WebhookDelivery.objects.filter(judgement=posted, event="judgement.confirmed").exists()
    (update,) = slack_api.calls("chat.update")
    assert (update.params["channel"], update.params["ts"]) == ("C0MAGIHELD", "1.000100")
    assert "*Confirmed* by bob at" in blocks_text(update) and "magi_confirm" not in blocks_text(
        update
    )
    assert [c.params["user"] for c in slack_api.calls("users.info")] == [SLACK_IDS["bob"]]


def test_an_override_asks_its_reason_in_a_modal_then_puts_the_other_verdict_in_force(
    posted, setup, slack_api, client
):
    assert post(client, block_action(posted.pk, OVERRIDE, SLACK_IDS["cy"])).status_code == 200
    (opened,) = slack_api.calls("views.open")
    assert opened.params["trigger_id"] == f"trigger-U0CY-{posted.pk}"
    assert opened.params["view"]["callback_id"] == "magi_override_view"
    assert "Your override puts *Rejected* in force" in str(opened.params["view"]["blocks"])
    unchanged(posted, slack_api)  # opening the modal decides nothing

    reason = "The refund was already paid once: <@channel> see ticket 88."
    response = post(client, override_submission(posted.pk, SLACK_IDS["cy"], reason))

    assert response.status_code == 200 and response.content == b""  # the modal closes
    override = Override.objects.get(judgement=posted)
    assert (override.by.username, override.decision, override.reason) == ("cy", "reject", reason)
    assert Judgement.objects.get(pk=posted.pk).verdict == "rejected"
    assert ChainEntry.objects.filter(judgement=posted, kind=EntryKind.OVERRIDE).exists()
    assert WebhookDelivery.objects.filter(judgement=posted, event="judgement.overridden").exists()
    (update,) = slack_api.calls("chat.update")
    shown = blocks_text(update)
    assert "*Overridden* by cy at" in shown and "&lt;@channel&gt;" in shown


def test_an_override_without_a_reason_keeps_the_modal_open_saying_so(posted, slack_api, client):
    response = post(client, override_submission(posted.pk, SLACK_IDS["cy"], "   "))

    assert response.json() == {
        "response_action": "errors",
        "errors": {"reason": "A reason is required."},
    }
    unchanged(posted, slack_api)


# --- refused before anything is read -------------------------------------------------------


def test_a_request_signed_with_another_secret_is_refused(posted, slack_api, client):
    response = post(client, block_action(posted.pk, CONFIRM, SLACK_IDS["bob"]), secret="0" * 32)

    assert response.status_code == 401
    assert "signature" in response.json()["error"]
    unchanged(posted, slack_api)
    assert slack_api.calls("users.info") == []


def test_a_payload_changed_after_signing_is_refused(posted, slack_api, client):
    body = form_body(block_action(posted.pk, CONFIRM, SLACK_IDS["dan"]))
    headers = signed_headers(body)
    forged = body.replace(SLACK_IDS["dan"].encode(), SLACK_IDS["bob"].encode())
    response = post_body(client, forged, headers)

    assert response.status_code == 401
    unchanged(posted, slack_api)


def test_a_request_older_than_five_minutes_is_refused_though_well_signed(posted, slack_api, client):
    old = int(time.time()) - 6 * 60
    response = post(client, block_action(posted.pk, CONFIRM, SLACK_IDS["bob"]), timestamp=old)

    assert response.status_code == 401
    assert "more than five minutes" in response.json()["error"]
    unchanged(posted, slack_api)


def test_a_request_without_slacks_headers_is_refused(posted, slack_api, client):
    body = form_body(block_action(posted.pk, CONFIRM, SLACK_IDS["bob"]))
    response = post_body(client, body)

    assert response.status_code == 401
    unchanged(posted, slack_api)


def test_a_replayed_request_is_refused(posted, setup, slack_api, client):
    body = form_body(block_action(posted.pk, OVERRIDE, SLACK_IDS["cy"]))
    headers = signed_headers(body)
    first, again = post_body(client, body, headers), post_body(client, body, headers)

    assert first.status_code == 200
    assert again.status_code == 401 and "replay" in again.json()["error"]
    assert len(slack_api.calls("views.open")) == 1


# --- refused to the clicker, privately --------------------------------------------------


def test_a_slack_user_magi_does_not_know_is_told_privately_how_to_link(posted, slack_api, client):
    slack_api.add_user("U0STRANGER", "stranger@elsewhere.example")
    post(client, block_action(posted.pk, CONFIRM, "U0STRANGER"))

    (answer,) = private_answers(slack_api, "U0STRANGER")
    assert answer.startswith("MAGI does not know who you are")
    assert "https://magi.example.com/account/slack/link/?token=" in answer
    unchanged(posted, slack_api)


def test_an_email_slack_has_not_confirmed_is_no_one(posted, setup, slack_api, client):
    slack_api.add_user("U0FAKEBOB", setup.people["bob"].email, confirmed=False)
    post(client, block_action(posted.pk, CONFIRM, "U0FAKEBOB"))

    assert private_answers(slack_api, "U0FAKEBOB")[0].startswith("MAGI does not know who you are")
    unchanged(posted, slack_api)


def test_the_submitter_is_refused_by_four_eyes(posted, slack_api, client):
    post(client, block_action(posted.pk, CONFIRM, SLACK_IDS["ana"]))

    (answer,) = private_answers(slack_api, SLACK_IDS["ana"])
    assert answer.startswith(f"Four eyes: you started judgement {posted.pk}")
    assert "bob, cy" in answer
    unchanged(posted, slack_api)


def test_the_submitter_cannot_override_through_the_modal_either(posted, slack_api, client):
    response = post(client, override_submission(posted.pk, SLACK_IDS["ana"], "Mine, and right."))

    assert response.json()["errors"]["reason"].startswith("Four eyes:")
    unchanged(posted, slack_api)


@pytest.mark.parametrize(
    "who", ["dan", "eve"], ids=["a_member_who_does_not_review", "another_teams_reviewer"]
)
def test_someone_who_does_not_review_the_panel_is_refused(posted, slack_api, client, who):
    post(client, block_action(posted.pk, CONFIRM, SLACK_IDS[who]))
    post(client, block_action(posted.pk, OVERRIDE, SLACK_IDS[who]))

    assert (
        private_answers(slack_api, SLACK_IDS[who])
        == ["You are not a reviewer of this panel (“Refunds”): nothing changed."] * 2
    )
    assert slack_api.calls("views.open") == []
    unchanged(posted, slack_api)


def test_a_second_click_is_told_who_decided_and_changes_nothing(posted, slack_api, client):
    post(client, block_action(posted.pk, CONFIRM, SLACK_IDS["bob"]))
    post(client, block_action(posted.pk, OVERRIDE, SLACK_IDS["cy"]))
    post(client, override_submission(posted.pk, SLACK_IDS["cy"], "Too late, it turns out."))

    (answer,) = private_answers(slack_api, SLACK_IDS["cy"])
    assert answer.startswith("Already confirmed by bob at")
    assert slack_api.calls("views.open") == []
    assert not Override.objects.filter(judgement=posted).exists()
    assert Confirmation.objects.get(judgement=posted).by.username == "bob"
    assert len(slack_api.calls("chat.update")) == 1


def test_a_slack_user_who_linked_their_account_reviews_as_it(posted, setup, slack_api, client):
    slack_api.add_user("U0BOBWORK", "robert@work.example")  # not the email MAGI has
    post(client, block_action(posted.pk, CONFIRM, "U0BOBWORK"))
    link = (
        private_answers(slack_api, "U0BOBWORK")[0]
        .split("link your Slack account here: ")[1]
        .split(" ")[0]
    )
    path = link.removeprefix("https://magi.example.com")

    client.force_login(setup.people["bob"])
    assert "Link my Slack account" in client.get(path).content.decode()
    assert client.post(path).status_code == 200
    client.logout()
    assert SlackLink.objects.get(slack_user="U0BOBWORK").user == setup.people["bob"]
    post(client, block_action(posted.pk, CONFIRM, "U0BOBWORK"))

    assert Confirmation.objects.get(judgement=posted).by == setup.people["bob"]


def test_a_forged_link_links_nobody(setup, client):
    client.force_login(setup.people["dan"])
    response = client.post("/account/slack/link/?token=eyJ3b3Jrc3BhY2UiOiJUMCJ9:forged:sig")

    assert response.status_code == 400
    assert not SlackLink.objects.exists()


def test_when_slack_does_not_say_who_clicked_nothing_is_decided(posted, slack_api, client):
    slack_api.script("users.info", Scripted(status=500))
    post(client, block_action(posted.pk, CONFIRM, SLACK_IDS["bob"]))

    (answer,) = private_answers(slack_api, SLACK_IDS["bob"])
    assert answer.startswith(
        "Slack did not say who you are (Slack answered fatal_error (HTTP 500))"
    )
    unchanged(posted, slack_api)


def test_a_modal_slack_will_not_open_is_said_privately(posted, slack_api, client):
    slack_api.script("views.open", Scripted(error="expired_trigger_id"))
    response = post(client, block_action(posted.pk, OVERRIDE, SLACK_IDS["cy"]))

    assert response.status_code == 200
    (answer,) = private_answers(slack_api, SLACK_IDS["cy"])
    assert answer == (
        "Slack did not open the override's form (Slack answered expired_trigger_id): "
        "nothing changed."
    )


def without(payload: dict, *path: str) -> dict:
    """The payload with the key at `path` taken out."""
    *parents, last = path
    inner = payload
    for key in parents:
        inner = inner[key]
    del inner[last]
    return payload


@pytest.mark.parametrize(
    "broken",
    [
        lambda pk: {**block_action(pk, CONFIRM, SLACK_IDS["bob"]), "actions": []},
        lambda pk: without(block_action(pk, CONFIRM, SLACK_IDS["bob"]), "user"),
        lambda pk: {
            **block_action(pk, CONFIRM, SLACK_IDS["bob"]),
            "actions": [{"action_id": CONFIRM, "value": f"{pk}; drop"}],
        },
        lambda pk: {**block_action(pk, CONFIRM, SLACK_IDS["bob"]), "container": None},
        lambda pk: {**block_action(pk, CONFIRM, SLACK_IDS["bob"]), "user": {"id": ["bob"]}},
        lambda pk: {
            **override_submission(pk, SLACK_IDS["cy"], "A reason."),
            "view": {"callback_id": "magi_override_view", "private_metadata": "{not json"},
        },
        lambda pk: without(override_submission(pk, SLACK_IDS["cy"], "A reason."), "view", "state"),
    ],
    ids=[
        "no action",
        "no user",
        "a value that is no id",
        "a null container",
        "a user id that is no string",
        "metadata that is no JSON",
        "a modal without its inputs",
    ],
)
def test_a_well_signed_payload_magi_did_not_send_is_refused_and_changes_nothing(
    posted, slack_api, client, broken
):
    # Signed with the team's secret: an attacker holding it, or Slack sending a shape
    # MAGI never asked for. Neither decides anything.
    response = post(client, broken(posted.pk))

    assert response.status_code == 400
    assert response.json() == {"error": "Not an interaction MAGI sent."}
    assert slack_api.calls("chat.postEphemeral") == []
    unchanged(posted, slack_api)
