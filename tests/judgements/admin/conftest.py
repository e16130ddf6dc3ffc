"""Fixtures the admin tests share."""

import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def admin_client(client, db):
    """The test client logged in as root, a superuser."""
    admin = get_user_model().objects.create_superuser("root", password="pw")
    client.force_login(admin)
    return client
