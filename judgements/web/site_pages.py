"""The site's own pages and answers: the health probe, logging out, a bad request."""

from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth import logout
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render, resolve_url
from django.views.decorators.http import require_GET, require_POST

from judgements.api import judgement_endpoints
from judgements.web import consumers


@require_GET
async def healthz(request: HttpRequest) -> JsonResponse:
    # Async, so a load balancer's probe never waits behind the process's sync views.
    return JsonResponse({"status": "ok"})


@require_POST
def log_out(request: HttpRequest) -> HttpResponse:
    """Log out, then close the live pages this login session still has open."""
    session_key = request.session.session_key
    logout(request)
    if session_key:
        async_to_sync(consumers.close_session_sockets)(session_key)
    return redirect(resolve_url(settings.LOGOUT_REDIRECT_URL))


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's handler400. A page form posted over MAGI_MAX_BODY_BYTES ends here, not in
    its view, because the CSRF check reads the body first: say what happened and that the
    browser's Back keeps what was typed, instead of Django's bare "Bad Request" page."""
    too_big = isinstance(exception, RequestDataTooBig)
    if request.path.startswith("/api/"):
        return (
            judgement_endpoints.body_too_large()
            if too_big
            else judgement_endpoints.error(400, "Bad request.")
        )
    context = {"too_big": too_big, "limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}
    return render(request, "judgements/bad_request.html", context, status=413 if too_big else 400)
