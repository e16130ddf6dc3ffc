"""Fixtures the admin tests share."""

import pytest
from django.contrib.auth import get_user_model

from judgements.configuration import people


@pytest.fixture
def admin_client(client, db):
    """The test client logged in as root, a superuser made as `manage.py createsuperuser`
    makes one (audited: a log verified after it is clean)."""
    admin = get_user_model().objects.create_superuser("root", password="pw")
    people.record_made(admin, None, "tests")
    client.force_login(admin)
    return client
