"""With OpenID Connect on, passwords sign in only the break-glass superuser; sessions
and API tokens are not passwords, and a disabled user's token stops at once."""

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from judgements.models import ApiToken
from tests.support import live_state

PASSWORD = "correct horse battery staple"


@pytest.fixture
def oidc(settings):
    settings.MAGI_OIDC_ISSUER = "https://idp.example.com/realms/acme"
    settings.MAGI_OIDC_BREAK_GLASS_USER = "root"
    settings.MAGI_OIDC_LOCAL_PASSWORDS = False
    return settings


def test_without_oidc_every_password_works_as_before(db):
    User.objects.create_user("ann", password=PASSWORD)
    assert authenticate(username="ann", password=PASSWORD) is not None


def test_with_oidc_only_the_break_glass_superuser_uses_a_password(db, oidc):
    User.objects.create_user("ann", password=PASSWORD)
    User.objects.create_superuser("root", password=PASSWORD)
    assert authenticate(username="ann", password=PASSWORD) is None
    assert authenticate(username="root", password=PASSWORD) is not None
    oidc.MAGI_OIDC_LOCAL_PASSWORDS = True
    oidc.MAGI_OIDC_BREAK_GLASS_USER = ""
    assert authenticate(username="ann", password=PASSWORD) is not None


def test_a_break_glass_name_that_is_not_a_superuser_gets_nothing(db, oidc):
    User.objects.create_user("root", password=PASSWORD)
    assert authenticate(username="root", password=PASSWORD) is None


def test_the_login_page_says_passwords_are_off(db, oidc):
    User.objects.create_user("ann", password=PASSWORD)
    page = Client().post("/accounts/login/", {"username": "ann", "password": PASSWORD})
    assert page.status_code == 200
    assert "Passwords are off" in page.content.decode()


def test_api_tokens_keep_working_and_stop_at_once_for_a_disabled_user(transactional_db, oidc):
    bot = User.objects.create_user("bot")
    key = ApiToken.issue(bot, "bot")[1]
    api = Client(headers={"Authorization": f"Bearer {key}"})
    assert api.get("/api/judgements/").status_code == 200
    User.objects.filter(pk=bot.pk).update(is_active=False)
    assert api.get("/api/judgements/").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_password_hash_django_upgrades_at_sign_in_is_audited(fake_llm, settings, admin_client):
    """A password set under a hasher since replaced: the next sign-in hashes it again with
    the new one (Django's check_password), which the audit records, so the log checks
    clean; the old hash is not what `audit verify` expects any more."""
    configured = live_state.configured()
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    url = reverse("admin:auth_user_password_change", args=[configured.maker.pk])
    form = {"password1": PASSWORD, "password2": PASSWORD, "usable_password": "true"}
    assert admin_client.post(url, form).status_code == 302  # audited, under PBKDF2
    live_state.assert_clean()
    settings.PASSWORD_HASHERS = settings.PASSWORD_HASHERS[::-1]  # MD5 preferred now
    assert Client().login(username="maker", password=PASSWORD)
    assert User.objects.get(pk=configured.maker.pk).password.startswith("md5$")
    live_state.assert_clean()
