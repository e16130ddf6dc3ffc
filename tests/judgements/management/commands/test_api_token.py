"""`manage.py api_token`: the key alone on stdout, the token's id on stderr (what `team
assign --token` takes), a team's token with --team, everything as JSON with --json."""

import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from judgements.models import ApiToken, AuditEntry, AuditSubject, Team
from tests.support.commands import run_command


def issue(*args: str) -> tuple[str, str]:
    """What a successful run prints: stdout and stderr (it does not exit)."""
    out, err = io.StringIO(), io.StringIO()
    call_command("api_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


pytestmark = pytest.mark.django_db


@pytest.fixture
def bot(db):
    return get_user_model().objects.create_user("bot", email="bot@example.com")


def test_it_prints_the_key_and_says_the_token_s_id(bot):
    out, err = issue("bot", "--name", "deploy")
    token = ApiToken.objects.get(name="deploy")
    assert token.key_hash == ApiToken.hash(out.strip())
    assert err.startswith(f"token {token.pk} ({token.prefix}…) for bot (deploy)")
    assert token.team is None


def test_it_issues_a_team_s_token_as_json(bot):
    Team.objects.create(name="Payments")
    printed = json.loads(issue("bot", "--team", "Payments", "--json")[0])
    token = ApiToken.objects.get(pk=printed["id"])
    assert token.team is not None and token.team.name == "Payments"
    assert ApiToken.hash(printed["key"]) == token.key_hash
    assert {k: printed[k] for k in ("name", "prefix", "team", "user")} == {
        "name": "api", "prefix": token.prefix, "team": "Payments", "user": "bot",
    }  # fmt: skip
    entry = AuditEntry.objects.get(subject=AuditSubject.TOKEN)
    assert entry.target == f"token {token.pk}" and entry.by is None


def test_it_names_the_field_of_bad_input(bot):
    assert run_command("api_token", "nobody") == (
        2, "", "invalid input: user: No user called 'nobody'.\n"
    )  # fmt: skip
    code, _, err = run_command("api_token", "bot", "--team", "Nope")
    assert (code, err) == (2, "invalid input: team: No team 'Nope'.\n")
    assert not ApiToken.objects.exists()
