"""A person's own notifications page: on or off, a message each or a digest; bad input
stays next to its field."""

import pytest

from judgements.models import NotificationChoice

pytestmark = pytest.mark.django_db


def test_a_person_turns_their_notifications_off(logged_in, user):
    page = logged_in.get("/account/notifications/")
    assert page.status_code == 200
    assert b"Email me when a verdict waits for my review" in page.content
    saved = logged_in.post("/account/notifications/", {"digest_minutes": "0"})
    assert saved.status_code == 302
    assert not NotificationChoice.objects.get(user=user).enabled


def test_a_digest_period_out_of_range_is_refused_next_to_its_field(logged_in, user):
    refused = logged_in.post(
        "/account/notifications/", {"enabled": "on", "digest_minutes": "999999"}
    )
    assert refused.status_code == 400
    assert b"Must be at most 10080 (a week)." in refused.content
    assert b'value="999999"' in refused.content
    assert not NotificationChoice.objects.filter(user=user).exists()


def test_it_says_when_no_email_can_reach_the_person(logged_in, user):
    assert b"Your account has no email address" in logged_in.get("/account/notifications/").content
    user.email = "ana@example.com"
    user.save()
    assert b"no email address" not in logged_in.get("/account/notifications/").content
