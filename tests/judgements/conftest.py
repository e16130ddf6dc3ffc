"""Fixtures the judgements tests share."""

import io

import pytest
from django.core.management import call_command

from tests.support.api_client import TokenClient, token_client
from tests.support.slack_server import SlackServer
from tests.support.webhook_receiver import Receiver


@pytest.fixture
def api(user) -> TokenClient:
    """The HTTP API as ada's program calls it, with her token."""
    return token_client(user)


@pytest.fixture
def staff(django_user_model):
    """ops, a member of staff: may override and confirm verdicts."""
    return django_user_model.objects.create_user("ops", password="pw", is_staff=True)


@pytest.fixture
def staff_api(staff) -> TokenClient:
    return token_client(staff)


@pytest.fixture
def receiver(settings):
    """A real HTTP receiver on loopback, allowed as a webhook host."""
    # Plain http allowed for loopback only because the list says so explicitly.
    settings.MAGI_WEBHOOK_HOSTS = ["http://127.0.0.1", "hooks.example.com", "*.example.org"]
    settings.MAGI_WEBHOOK_RETRY_INITIAL_WAIT = 0.0
    settings.MAGI_WEBHOOK_TIMEOUT = 5.0
    server = Receiver()
    yield server
    server.stop()


@pytest.fixture
def secret(user) -> str:
    """ada's webhook secret, as the management command shows it (once)."""
    out = io.StringIO()
    call_command("webhook_secret", "ada", stdout=out, stderr=io.StringIO())
    return out.getvalue().strip()


@pytest.fixture
def slack_api(settings):
    """A Slack Web API server on loopback, where MAGI's slack_sdk client posts."""
    server = SlackServer()
    settings.MAGI_SLACK_API_URL = server.url
    settings.MAGI_SITE_URL = "https://magi.example.com"
    yield server
    server.stop()
