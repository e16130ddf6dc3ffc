"""The user of a page that only signed-in users reach."""

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest


def signed_in_user(request: HttpRequest) -> User:
    """The user of a request login_required let through. HttpRequest.user is either a
    User or AnonymousUser; this is the check login_required made, where the type checker
    sees it, and a refusal (403) should a page ever lose its login_required."""
    user = request.user
    if isinstance(user, AnonymousUser):
        raise PermissionDenied
    return user
