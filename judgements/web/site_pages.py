"""The site's own pages: the health probe, the audit log's public keys, logging out."""

from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, resolve_url
from django.views.decorators.http import require_GET, require_POST

from judgements.audit import keys
from judgements.identity import provider
from judgements.web import consumers


@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    # Async, so a load balancer's probe never waits behind the process's sync views.
    return JsonResponse({"status": "ok"})


@require_GET
def public_keys(request: HttpRequest) -> JsonResponse:
    """The keys that check receipts and the log's signed checkpoints, the retired ones
    included, as a JWK set; no sign-in: anyone may check (docs/evidence.md)."""
    response = JsonResponse(keys.jwks())
    response["Cache-Control"] = "public, max-age=300"
    response["Access-Control-Allow-Origin"] = "*"
    return response


@require_POST
def log_out(request: HttpRequest) -> HttpResponse:
    """Log out, then close the live pages this login session still has open."""
    session_key = request.session.session_key
    login_page = resolve_url(settings.LOGOUT_REDIRECT_URL)
    # Signed in through the provider: sign out there too, then back to the login page.
    at_provider = provider.end_session_url(request, request.build_absolute_uri(login_page))
    logout(request)
    if session_key:
        async_to_sync(consumers.close_session_sockets)(session_key)
    return redirect(at_provider or login_page)
