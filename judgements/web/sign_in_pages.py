"""Signing in: Django's login page as before, and with OpenID Connect configured
(judgements/identity/, docs/sign-in.md) its button, the redirect to the provider and the
provider's way back. A refused sign-in gets a page that says why and stores nothing."""

import logging
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import login
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.shortcuts import redirect, render, resolve_url
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from judgements.identity import passwords, people, provider
from judgements.models.magi_settings import magi_settings

log = logging.getLogger(__name__)

# Where the page the person first asked for waits while they are at the provider.
NEXT_KEY = "oidc_next"
BACKEND = "judgements.identity.passwords.PasswordBackend"


class SignInForm(AuthenticationForm):
    """Django's login form; its refusal says so when passwords are off."""

    def get_invalid_login_error(self) -> ValidationError:
        if passwords.passwords_for_everyone():
            return super().get_invalid_login_error()
        self.error_messages = {
            **self.error_messages,
            "invalid_login": (
                "Passwords are off: sign in with "
                f"{magi_settings.MAGI_OIDC_PROVIDER_NAME}. Only the break-glass administrator "
                "signs in with a password here."
            ),
        }
        return super().get_invalid_login_error()


def oidc_context(error: str = "") -> dict[str, object]:
    return {
        "oidc": provider.enabled(),
        "oidc_name": magi_settings.MAGI_OIDC_PROVIDER_NAME,
        "oidc_error": error,
        "passwords_for_everyone": passwords.passwords_for_everyone(),
    }


def sign_in(request: HttpRequest) -> HttpResponseBase:
    """The login page: Django's, unchanged without OpenID Connect."""
    if not provider.enabled():
        return LoginView.as_view()(request)
    view = LoginView.as_view(authentication_form=SignInForm, extra_context=oidc_context())
    return view(request)


@require_POST
def oidc_start(request: HttpRequest) -> HttpResponse:
    """Off to the provider; the login page again, saying why, when it cannot be reached."""
    if not provider.enabled():
        return redirect("login")
    wanted = request.POST.get("next", "")
    safe = url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    request.session[NEXT_KEY] = wanted if safe else ""
    try:
        return provider.begin(request)
    except provider.ProviderUnreachable as exc:
        return unreachable_page(request, str(exc))
    except provider.SignInRefused as exc:
        return refused(request, str(exc))


@require_GET
def oidc_callback(request: HttpRequest) -> HttpResponse:
    """The provider's way back: the ID token checked, the person signed in as their MAGI
    user with their teams following their groups, for MAGI_OIDC_SESSION_SECONDS from now
    whatever the session does after."""
    if not provider.enabled():
        return redirect("login")
    try:
        claims, id_token = provider.finish(request)
        user = people.sign_in(people.person_from(claims, provider.issuer()))
    except provider.ProviderUnreachable as exc:
        return unreachable_page(request, str(exc))
    except provider.SignInRefused as exc:
        return refused(request, str(exc))
    wanted = request.session.pop(NEXT_KEY, "")
    login(request, user, backend=BACKEND)
    # Kept for the provider's logout (id_token_hint); login() may have started a fresh
    # session, so it goes in after.
    request.session[provider.ID_TOKEN_KEY] = id_token
    # An instant, not a number of seconds: Django counts seconds from the session's last
    # save, and a sign-in started but never finished (oidc_start writes its state into
    # the session) would push the end back each time. The bound is absolute: this
    # completed sign-in plus MAGI_OIDC_SESSION_SECONDS.
    ends = timezone.now() + timedelta(seconds=magi_settings.MAGI_OIDC_SESSION_SECONDS)
    request.session.set_expiry(ends)
    log.info("signed in through OpenID Connect: user %s", user.pk)
    return redirect(wanted or resolve_url(settings.LOGIN_REDIRECT_URL))


def refused(request: HttpRequest, reason: str) -> HttpResponse:
    """The refusal page; the half-finished sign-in leaves nothing in the session (a
    session already signed in stays as it was)."""
    request.session.pop(NEXT_KEY, None)
    log.warning("OpenID Connect sign-in refused: %s", reason)
    context = {"reason": reason, **oidc_context()}
    return render(request, "registration/sign_in_refused.html", context, status=403)


def unreachable_page(request: HttpRequest, reason: str) -> HttpResponse:
    context = {"form": SignInForm(request), "next": "", **oidc_context(reason)}
    return render(request, "registration/login.html", context, status=503)
