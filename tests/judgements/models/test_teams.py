"""Teams and their members (judgements/models/teams.py); who may use what a team owns is
models/policy.py's (tests/judgements/models/test_policy.py)."""

import pytest

from judgements.models import Membership, Team

pytestmark = pytest.mark.django_db


def test_a_team_s_members_are_named_in_order_and_in_its_etag(user, other_user):
    team = Team.objects.create(name="Payments")
    before = team.etag()
    Membership.objects.create(team=team, user=other_user)
    Membership.objects.create(team=team, user=user)
    assert team.member_names() == ["ada", "bob"]
    assert team.etag() != before
