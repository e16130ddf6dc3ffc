"""A user's API tokens page (judgements/web/token_pages.py): a key shown once, a revoke that
stops it at once, and nobody else's tokens."""

import pytest
from django.urls import reverse

from judgements.models import ApiToken

pytestmark = pytest.mark.django_db

TOKENS = "/tokens/"


def test_a_new_token_is_shown_once_and_works(logged_in, user):
    response = logged_in.post(TOKENS, {"name": "CI deploy gate"})
    key = response.context["key"]
    assert key.startswith("magi_") and key in response.content.decode()
    assert "no-store" in response["Cache-Control"]
    token = ApiToken.objects.get(user=user)
    assert token.name == "CI deploy gate" and token.key_hash == ApiToken.hash(key)
    listing = logged_in.get(TOKENS).content.decode()
    assert key not in listing and f"magi_{token.prefix}…" in listing
    active = ApiToken.active(key)
    assert active is not None and active.user == user


def test_a_revoked_token_stops_at_once_and_stays_listed(logged_in, user):
    token, key = ApiToken.issue(user, "script")
    response = logged_in.post(reverse("token-revoke", args=[token.pk]))
    assert response.status_code == 302 and response["Location"] == TOKENS
    assert ApiToken.active(key) is None
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert "revoked" in logged_in.get(TOKENS).content.decode()
    assert not token.revoke()  # once is enough


def test_a_token_needs_a_name_shown_next_to_the_field(logged_in, user):
    response = logged_in.post(TOKENS, {"name": "  "})
    page = response.content.decode()
    assert response.status_code == 400
    assert 'data-field="name"' in page and "This field is required." in page
    assert "There is a problem" in page
    assert not ApiToken.objects.exists()


def test_another_users_token_cannot_be_revoked_or_seen(client, user, other_user):
    token, key = ApiToken.issue(other_user, "theirs")
    client.force_login(user)
    assert client.post(reverse("token-revoke", args=[token.pk])).status_code == 404
    active = ApiToken.active(key)
    assert active is not None and active.user == other_user
    assert "theirs" not in client.get(TOKENS).content.decode()


def test_the_page_needs_a_login(client):
    assert client.get(TOKENS).status_code == 302
