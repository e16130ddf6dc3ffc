"""Signing in through the suite's real OpenID Connect provider (tests/support/
identity_provider.py) with Django's test client: how long the session lasts, and the
reviewer role on panels the team gets after the sign-in."""

from datetime import datetime, timedelta

import pytest
from django.contrib.sessions.models import Session
from django.utils import timezone

from judgements.models import Judgement, Panel, Status, Team
from tests.support.identity_provider import IdentityProvider, sign_in_with_client
from tests.support.states import bring

HOURS = 8 * 3600


@pytest.fixture(scope="module")
def idp():
    server = IdentityProvider().start()
    server.register("magi", "secret", "http://testserver")
    yield server
    server.stop()


@pytest.fixture
def configured(settings, idp):
    settings.MAGI_OIDC_ISSUER = idp.issuer
    settings.MAGI_OIDC_CLIENT_ID = "magi"
    settings.MAGI_OIDC_CLIENT_SECRET = "secret"
    settings.MAGI_OIDC_SESSION_SECONDS = HOURS
    settings.MAGI_OIDC_GROUPS = {
        "fraud": {"team": "Fraud", "role": "member"},
        "fraud-reviewers": {"team": "Fraud", "role": "reviewer"},
    }
    return settings


def session_ends(client) -> datetime:
    return Session.objects.get(session_key=client.session.session_key).expire_date


def test_a_sign_in_started_but_not_finished_does_not_extend_the_session(
    db, client, configured, idp
):
    idp.person("sam", ["fraud"])
    before = timezone.now()
    assert sign_in_with_client(client, idp, "sam").status_code == 302
    ends = session_ends(client)
    assert before + timedelta(seconds=HOURS) <= ends <= timezone.now() + timedelta(seconds=HOURS)
    # Off to the provider again while signed in, and never back: the end stays put.
    started = client.post("/accounts/oidc/start/")
    assert started.status_code == 302 and started["Location"].startswith(idp.issuer)
    assert session_ends(client) == ends
    assert client.get("/judgements/").status_code == 200
    # A completed sign-in is what sets a new end.
    assert sign_in_with_client(client, idp, "sam").status_code == 302
    assert session_ends(client) > ends


def test_a_panel_given_to_the_team_later_reaches_its_reviewers_queue(db, client, configured, idp):
    idp.person("rita", ["fraud-reviewers"])
    assert sign_in_with_client(client, idp, "rita").status_code == 302
    agents = [dict(name=n, model="model-a", criteria="c") for n in ("A", "B", "C")]
    panel = Panel.objects.create(name="Later", team=Team.objects.get(name="Fraud"), agents=agents)
    held = Judgement.objects.create(
        title="Held on a later panel", content="x", team=panel.team, panel=panel,
        hold_contested=True,
    )  # fmt: skip
    bring(Judgement.objects.filter(pk=held.pk), Status.APPROVED, contested=True)
    assert "Held on a later panel" in client.get("/reviews/").content.decode()
