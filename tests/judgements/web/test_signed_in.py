"""The user of a page behind login_required (judgements/web/signed_in.py): the signed-in
User, and a refusal, never AnonymousUser, should a page ever lose its login_required."""

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from judgements.web.signed_in import signed_in_user


def test_a_signed_in_request_gives_its_user(user: User) -> None:
    request = RequestFactory().get("/tokens/")
    request.user = user
    assert signed_in_user(request) == user


def test_an_anonymous_request_is_refused() -> None:
    request = RequestFactory().get("/tokens/")
    request.user = AnonymousUser()
    with pytest.raises(PermissionDenied):
        signed_in_user(request)
