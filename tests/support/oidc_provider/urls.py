"""The provider's pages: django-oauth-toolkit under /o/, a login page, and /control/ for
the tests (on 127.0.0.1 only, in a test run only)."""

import json
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth import views as auth_views
from django.contrib.auth.models import Group, User
from django.http import HttpRequest, JsonResponse
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST
from oauth2_provider.models import Application
from oauth2_provider.settings import oauth2_settings

from tests.support.oidc_provider.claims import MISCHIEF, VERIFIED_GROUP


def body(request: HttpRequest) -> dict[str, Any]:
    return json.loads(request.body or b"{}")


@csrf_exempt
@require_POST
def control_user(request: HttpRequest) -> JsonResponse:
    """Make or change a person: {username, password, email, email_verified, name, groups}."""
    data = body(request)
    user, created = User.objects.get_or_create(username=data["username"])
    user.email = data.get("email", user.email)
    first, _, last = data.get("name", "").partition(" ")
    user.first_name, user.last_name = first, last
    # Only a new person's: a new password would end their provider session, which the
    # sign-out test must see MAGI end instead.
    if created:
        user.set_password(data.get("password", "provider password"))
    user.save()
    names = list(data.get("groups", []))
    if data.get("email_verified", True):
        names.append(VERIFIED_GROUP)
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in names])
    return JsonResponse({"sub": str(user.pk)})


@csrf_exempt
@require_POST
def control_client(request: HttpRequest) -> JsonResponse:
    """Register a client: {client_id, client_secret, redirect_uri, post_logout_redirect_uri}."""
    data = body(request)
    Application.objects.filter(client_id=data["client_id"]).delete()
    Application.objects.create(
        name=data["client_id"],
        client_id=data["client_id"],
        client_secret=data["client_secret"],
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=data["redirect_uri"],
        post_logout_redirect_uris=data["post_logout_redirect_uri"],
        algorithm=Application.RS256_ALGORITHM,
        skip_authorization=True,
    )
    return JsonResponse({"ok": True})


@csrf_exempt
@require_POST
def control_mischief(request: HttpRequest) -> JsonResponse:
    MISCHIEF["kind"] = body(request)["kind"]
    return JsonResponse({"ok": True})


@csrf_exempt
@require_POST
def control_rotate_key(request: HttpRequest) -> JsonResponse:
    """Sign from now on with a new key (a new key id); the JWKS publishes only it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    oauth2_settings.OIDC_RSA_PRIVATE_KEY = pem
    return JsonResponse({"ok": True})


urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("control/user", control_user),
    path("control/client", control_client),
    path("control/mischief", control_mischief),
    path("control/rotate-key", control_rotate_key),
]
