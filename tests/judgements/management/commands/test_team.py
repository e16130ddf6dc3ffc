"""`manage.py team`: teams, members and reviewers for scripts, audited as from the admin,
exit 2 naming the field for bad input."""

import pytest
from django.contrib.auth import get_user_model

from judgements.configuration import teams
from judgements.models import AuditEntry, AuditSubject, Panel, Team
from tests.support.cases import case_for
from tests.support.commands import run_command
from tests.support.slack_requests import BOT_TOKEN, connect

pytestmark = pytest.mark.django_db


@pytest.fixture
def users(db):
    make = get_user_model().objects.create_user
    return [make(name, password="pw") for name in ("ana", "bob")]


def test_it_creates_a_team_and_changes_its_members(users):
    assert run_command("team", "create", "Payments")[0] == 0
    code, out, _ = run_command("team", "add", "Payments", "ana", "bob")
    assert (code, out.strip()) == (0, "Payments: ana, bob")
    code, out, _ = run_command("team", "remove", "Payments", "bob")
    assert (code, out.strip()) == (0, "Payments: ana")
    entry = AuditEntry.objects.filter(subject=AuditSubject.MEMBERSHIP).latest("pk")
    assert (entry.by, entry.before, entry.after) == (None, ["ana", "bob"], ["ana"])
    assert run_command("team", "list")[1].strip() == "Payments\tana"


def test_a_team_created_here_is_audited_as_through_the_api(users):
    """Issue 49: `team create` skipped the audit every other way of making a team keeps."""
    assert run_command("team", "create", "Payments")[0] == 0
    entry = AuditEntry.objects.get(subject=AuditSubject.TEAM)
    assert (entry.by, entry.before, entry.after) == (
        None,
        None,
        {"name": "Payments", "members": []},
    )


def test_it_names_the_field_of_bad_input(users):
    run_command("team", "create", "Payments")
    assert run_command("team", "create", "Payments") == (
        2, "", "invalid input: name: There is already a team called 'Payments'.\n"
    )  # fmt: skip
    code, _, err = run_command("team", "add", "Payments", "ana", "nobody")
    assert (code, err) == (2, "invalid input: usernames: No user is called 'nobody'.\n")
    assert not Team.objects.get(name="Payments").members.exists()
    code, _, err = run_command("team", "add", "Nope", "ana")
    assert (code, err) == (2, "invalid input: name: No team is called 'Nope'.\n")


def test_it_gives_a_panel_to_a_team_and_says_who_reviews_it(users):
    panel = Panel.objects.create(name="Refunds", owner=users[0], agents=case_for()["agents"])
    run_command("team", "create", "Payments")
    run_command("team", "add", "Payments", "ana", "bob")
    assert run_command("team", "assign", "Payments", "--panel", str(panel.pk))[0] == 0
    code, _, _ = run_command(
        "team", "reviewers", str(panel.pk), "--users", "bob", "--four-eyes", "on"
    )
    assert code == 0
    panel.refresh_from_db()
    assert panel.team is not None
    assert (panel.team.name, list(panel.reviewers.all()), panel.four_eyes) == (
        "Payments", [users[1]], True
    )  # fmt: skip
    shown = run_command("team", "show", "Payments")[1]
    assert f"panel {panel.pk} 'Refunds': reviewers bob, four eyes" in shown
    assert "every panel" not in shown
    # A reviewer of every panel, as a sign-in's groups make one (docs/sign-in.md).
    teams.set_reviews_all(panel.team, users[0], True, None, "https://idp.example.com")
    shown = run_command("team", "show", "Payments")[1]
    assert "reviewers of every panel (sign-in groups): ana" in shown


def test_a_reviewer_from_outside_the_team_is_refused(users):
    panel = Panel.objects.create(name="Refunds", owner=users[0], agents=case_for()["agents"])
    run_command("team", "create", "Payments")
    run_command("team", "add", "Payments", "ana")
    run_command("team", "assign", "Payments", "--panel", str(panel.pk))
    code, _, err = run_command("team", "reviewers", str(panel.pk), "--users", "bob")
    assert (code, err) == (2, "invalid input: reviewers: Not in the team Payments: bob.\n")


# --- slack-test -------------------------------------------------------------------------


def test_slack_test_posts_the_test_message_where_held_verdicts_go(slack_api):
    team = Team.objects.create(name="Payments")
    connect(team)
    code, out, err = run_command("team", "slack-test", "Payments")

    assert (code, err) == (0, "")
    assert "Posted a test message to C0MAGIHELD." in out
    assert len(slack_api.calls("chat.postMessage")) == 1


def test_slack_test_says_what_slack_refused_and_exits_1(slack_api):
    team = Team.objects.create(name="Payments")
    connect(team)
    slack_api.revoke(BOT_TOKEN)
    code, _, err = run_command("team", "slack-test", "Payments")

    assert code == 1
    assert "Slack refused the bot token (invalid_auth): set a new one." in err


def test_slack_test_of_a_team_without_slack_or_no_team(db):
    Team.objects.create(name="Payments")
    code, _, err = run_command("team", "slack-test", "Payments")
    assert code == 1 and "has no Slack connection" in err

    code, _, err = run_command("team", "slack-test", "Nobody")
    assert code == 2 and "name" in err
