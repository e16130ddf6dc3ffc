"""The compare-and-swap behind If-Match (judgements/configuration/versions.py): a write made
against a version another change has moved past finds nothing to update."""

import pytest

from judgements.configuration import versions
from judgements.core.etags import Stale
from judgements.models import Team

pytestmark = pytest.mark.django_db


def test_a_write_at_the_version_read_moves_it_on_and_a_second_one_is_refused():
    team = Team.objects.create(name="Payments")
    assert versions.bump(Team.objects, team.pk, 1, "team", name="Pay") == 2
    with pytest.raises(Stale):
        versions.bump(Team.objects, team.pk, 1, "team", name="Lost")
    assert Team.objects.get(pk=team.pk).name == "Pay"


def test_a_write_at_no_version_moves_whatever_it_is_on():
    team = Team.objects.create(name="Payments", version=7)
    assert versions.bump(Team.objects, team.pk, None, "team", name="Pay") == 8
