"""Requests for programs (the HTTP API and /healthz) skip the page middlewares.

Django runs each sync-style middleware of an async request on a thread of its own made
for that request: two thread hops per middleware, seven middlewares, fourteen hops for a
request that reads one row. In a burst of API calls those hops, not the work, took most
of the process's CPU and put reads at half a second (bench/abuse.py). The API uses bearer
tokens and JSON, not sessions, cookies, CSRF or messages, so under daphne its views are
called straight after the Content-Security-Policy, with the security headers.
"""

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponse
from django.middleware.security import SecurityMiddleware
from django.urls import Resolver404, resolve
from django.utils.decorators import sync_and_async_middleware

from judgements.web.security import GetResponse

FAST_LANE_PREFIXES = ("/api/", "/healthz", "/metrics")


@sync_and_async_middleware
def api_fast_lane(get_response: GetResponse) -> GetResponse:
    """Under ASGI, call an API view (all of them async, CSRF-exempt, answering JSON on
    every error: api/judgement_endpoints.py) with Django's security headers and HTTPS redirect
    applied on the event loop (SecurityMiddleware's own methods: they only read the
    request and set headers), without the session, auth, CSRF, messages and clickjacking
    middlewares. A sync request (the test client) takes the usual way."""
    if not iscoroutinefunction(get_response):
        return get_response
    security = SecurityMiddleware(get_response)

    async def middleware(request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(FAST_LANE_PREFIXES):
            try:
                match = resolve(request.path_info)
            except Resolver404:
                missing: HttpResponse = await get_response(request)
                return missing
            if iscoroutinefunction(match.func):
                request.resolver_match = match
                response = security.process_request(request)
                if response is None:
                    response = await match.func(request, *match.args, **match.kwargs)
                return security.process_response(request, response)
        passed: HttpResponse = await get_response(request)
        return passed

    return middleware
