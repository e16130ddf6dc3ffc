"""The HTTP API's addresses, all under /api/: the routers of api/site.py's NinjaAPI,
each view answering HEAD as GET and a wrong method with JSON, and a JSON 404 for any
other path under /api/."""

import functools
from collections.abc import Awaitable, Callable

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.urls import URLPattern, URLResolver, include, path, re_path

from judgements.api import (
    batch_endpoints,
    evaluation_endpoints,
    judgement_endpoints,
    kinds,  # noqa: F401 - registers every kind of configuration
    log_endpoints,
    resource_routes,
    resources,
    slack_endpoints,
)
from judgements.api.site import api, not_found

# Every kind of configuration's routes, generated from its class (api/kinds.py); the
# evaluations' kinds (suites) before the evaluations, as /api/schema.json lists them.
kind_routers = [(kind.tag, resource_routes.router_for(kind)) for kind in resources.registered()]
api.add_router("/", judgement_endpoints.router)
for tag, router in kind_routers:
    if tag == "evaluations":
        api.add_router("/", router)
api.add_router("/", evaluation_endpoints.router)
for tag, router in kind_routers:
    if tag != "evaluations":
        api.add_router("/", router)
api.add_router("/", slack_endpoints.router)
api.add_router("/", batch_endpoints.router)
api.add_router("/", log_endpoints.router)

AsyncView = Callable[..., Awaitable[HttpResponse]]


def http_methods(view: AsyncView) -> AsyncView:
    """HEAD is GET without the body (RFC 9110), and a method the path does not take
    answers 405 as JSON, with the Allow header ninja sets."""

    @functools.wraps(view)
    async def wrapped(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        head = request.method == "HEAD"
        if head:
            request.method = "GET"
        response = await view(request, *args, **kwargs)
        if head:
            request.method = "HEAD"
            if response.status_code != 405:
                response.content = b""
        if isinstance(response, HttpResponseNotAllowed):
            allowed = response["Allow"]
            methods = allowed.split(", ") + (["HEAD"] if "GET" in allowed else [])
            answer = JsonResponse(
                {"error": f"Use {' or '.join(sorted(set(methods)))}."}, status=405
            )
            answer["Allow"] = ", ".join(sorted(set(methods)))
            return answer
        return response

    wrapped.csrf_exempt = True  # type: ignore[attr-defined]  # Django's mark on a view function
    return wrapped


def with_http_methods(
    patterns: list[URLPattern | URLResolver],
) -> list[URLPattern | URLResolver]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            with_http_methods(pattern.url_patterns)
        elif isinstance(pattern, URLPattern) and pattern.name == "api-root":
            # ninja names /api/ only to find its own address; it answers HTML 404 there.
            pattern.callback = not_found
        elif isinstance(pattern, URLPattern) and iscoroutinefunction(pattern.callback):
            # ninja's operations; its docs page is a plain view.
            pattern.callback = http_methods(pattern.callback)
    return patterns


# Not `app_name`: Django would read that name as this module's own namespace.
ninja_patterns, ninja_app, ninja_namespace = api.urls
urlpatterns = [
    path(
        "api/",
        include((with_http_methods(ninja_patterns), ninja_app), namespace=ninja_namespace),
    ),
    # Anything else under /api/ answers JSON too, never the site's HTML 404.
    re_path(r"^api/", not_found, name="api-not-found"),
]
