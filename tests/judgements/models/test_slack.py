"""The Slack models (judgements/models/slack.py): which messages are due, and a message's
graph."""

from datetime import timedelta

import pytest
from django.utils import timezone

from judgements.models import SlackMessage, SlackMessageStates, SlackMessageStatus, Team
from tests.support.slack_requests import connect
from tests.support.states import bring

pytestmark = pytest.mark.django_db


def test_due_are_the_messages_to_post_or_update_whose_wait_is_over_and_nobody_holds(make_judgement):
    connection = connect(Team.objects.create(name="Payments"))
    now = timezone.now()
    rows = {}
    for name, status, wait, holder in [
        ("to_post", SlackMessageStatus.PENDING, -1, None),
        ("to_update", SlackMessageStatus.OUTDATED, -1, None),
        ("waiting", SlackMessageStatus.PENDING, 60, None),
        ("held", SlackMessageStatus.PENDING, -1, now + timedelta(seconds=30)),
        ("held_expired", SlackMessageStatus.PENDING, -1, now - timedelta(seconds=1)),
        ("posted", SlackMessageStatus.POSTED, -1, None),
        ("failed", SlackMessageStatus.FAILED, -1, None),
    ]:
        rows[name] = SlackMessage.objects.create(judgement=make_judgement(), connection=connection)
        bring(
            SlackMessage.objects.filter(pk=rows[name].pk),
            status,
            next_attempt_at=now + timedelta(seconds=wait),
            lease_owner="w0" if holder else "",
            lease_expires_at=holder,
        )

    due = {row.pk for row in SlackMessage.objects.due(now)}
    assert due == {rows[name].pk for name in ("to_post", "to_update", "held_expired")}


def test_only_a_message_given_up_is_taken_up_again_and_only_a_dropped_one_is_done_for_good():
    into_pending = {
        name
        for name, move in SlackMessageStates.moves.items()
        if SlackMessageStatus.PENDING in move.targets
    }
    assert into_pending == {"retry_post", "requeue"}
    assert SlackMessageStates.final == {SlackMessageStatus.DROPPED}
