"""MAGI's password check: Django's, unchanged without OpenID Connect sign-in; with it,
refused for everyone but the break-glass superuser (MAGI_OIDC_BREAK_GLASS_USER), unless
MAGI_OIDC_LOCAL_PASSWORDS keeps everyone's. Sessions and API tokens are not passwords:
a signed-in session and a bot's token work as before (an inactive user's do not)."""

from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.http import HttpRequest

from judgements.configuration import people
from judgements.models import is_id
from judgements.models.magi_settings import magi_settings

# The actor of the audit row of a password hash Django upgraded at a sign-in.
REHASHED = "sign-in: the password hash upgraded by Django's hashers"


def passwords_for_everyone() -> bool:
    return not magi_settings.MAGI_OIDC_ISSUER or bool(magi_settings.MAGI_OIDC_LOCAL_PASSWORDS)


def break_glass_user() -> str:
    return str(magi_settings.MAGI_OIDC_BREAK_GLASS_USER)


class PasswordBackend(ModelBackend):
    """Django's ModelBackend, but for whose password counts."""

    def user_can_authenticate(self, user: User | AnonymousUser | None) -> bool:
        """Django's rule (an active user), and never a user whose id is below 1: neither
        MAGI nor Django makes one, so it was written into the database, and it signs in
        nowhere, by password or by a session (`manage.py audit verify` names it)."""
        return super().user_can_authenticate(user) and is_id(getattr(user, "pk", 0) or 0)

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> User | None:
        """Django's check, audited: a right password whose hash Django's hashers have
        since strengthened is hashed again and saved (check_password's upgrade), a changed
        password hash `manage.py audit verify` compares. The hash is read before and after
        by one query each, whether the user exists or not: no time to tell them apart."""
        hashes = User.objects.filter(username=username).values_list("pk", "password")
        before = dict(hashes)
        with transaction.atomic():
            user = self.checked(request, username, password, **kwargs)
            for pk, now in hashes.all():
                if before.get(pk, now) != now:
                    people.record_rehashed(pk, before[pk], REHASHED)
        return user

    def checked(
        self,
        request: HttpRequest | None,
        username: str | None,
        password: str | None,
        **kwargs: object,
    ) -> User | None:
        if passwords_for_everyone():
            return super().authenticate(request, username, password, **kwargs)
        if not break_glass_user() or username != break_glass_user():
            return None
        user = super().authenticate(request, username, password, **kwargs)
        # Break glass is for an administrator: a plain account of that name gets nothing.
        if user is None or not user.is_superuser:
            return None
        return user
