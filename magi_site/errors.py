"""Django's handler400, for the whole site: the one place that knows both a page and the
API, so that neither imports the other."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from judgements.api import site


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """Django's handler400. A page form posted over MAGI_MAX_BODY_BYTES ends here, not in
    its view, because the CSRF check reads the body first: say what happened and that the
    browser's Back keeps what was typed, instead of Django's bare "Bad Request" page."""
    too_big = isinstance(exception, RequestDataTooBig)
    if request.path.startswith("/api/"):
        if too_big:
            return site.body_too_large(request, exception)
        return site.error(request, 400, "Bad request.")
    context = {"too_big": too_big, "limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE}
    return render(request, "judgements/bad_request.html", context, status=413 if too_big else 400)
