"""Browser-facing hardening: a strict Content-Security-Policy on every HTTP response, and
the websocket's same-origin check (scheme, host and port, as Django's CSRF check does)."""

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from inspect import isawaitable
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponseBase
from django.http.request import split_domain_port, validate_host
from django.utils.decorators import sync_and_async_middleware
from whitenoise.middleware import WhiteNoiseMiddleware

from judgements.models.magi_settings import magi_settings

# Scripts and styles come only from our own static files: no inline code, no style
# attributes, no eval. The only other connection a page makes is its own websocket.
POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'; connect-src 'self'"
)
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}

# What a middleware is given: the next handler, sync or async (a response, or an
# awaitable of one).
GetResponse = Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]
# An ASGI application, as Django's handler and the MCP SDK's (Starlette) both take it:
# their signatures say Any of a scope's and a message's values, and so do these.
Scope = dict[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[Mapping[str, Any]], Awaitable[None]]
Application = Callable[[Scope, Receive, Send], Awaitable[None]]


def content_security_policy(request: HttpRequest) -> str:
    """The policy for a page served to this request, allowing its own websocket."""
    try:
        host = request.get_host()
    except DisallowedHost:
        return POLICY  # a refused host gets an error page, which needs no websocket
    scheme = "wss" if request.is_secure() else "ws"
    return f"{with_sign_in_provider(POLICY)} {scheme}://{host}"


def with_sign_in_provider(policy: str) -> str:
    """With OpenID Connect sign-in, the sign-in and log-out forms redirect to the
    provider, which `form-action` must allow (Chromium checks a form's redirects too)."""
    if not magi_settings.MAGI_OIDC_ISSUER:
        return policy
    issuer = urlsplit(magi_settings.MAGI_OIDC_ISSUER)
    origin = f"{issuer.scheme}://{issuer.netloc}"
    return policy.replace("form-action 'self';", f"form-action 'self' {origin};")


@sync_and_async_middleware
def content_security_policy_middleware(get_response: GetResponse) -> GetResponse:
    """Puts the policy on every response. Async-capable, so it never pushes an async
    request onto the process's one thread for sync code."""
    if iscoroutinefunction(get_response):

        async def async_middleware(request: HttpRequest) -> HttpResponseBase:
            response: HttpResponseBase = await get_response(request)
            response.setdefault("Content-Security-Policy", content_security_policy(request))
            return response

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        response = get_response(request)
        # A sync handler's answer is a response (the check says so to the type checker).
        if isinstance(response, HttpResponseBase):
            response.setdefault("Content-Security-Policy", content_security_policy(request))
        return response

    return middleware


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise, async-capable: WhiteNoise 6 is sync-only, and one sync middleware sends
    every request of the process through the one thread for sync code. Static files are
    still served by WhiteNoise; every other request passes straight on."""

    async_capable = True
    sync_capable = True

    def __init__(self, get_response: GetResponse) -> None:
        super().__init__(get_response)
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]:
        if self.is_async:
            return self.__acall__(request)
        return super().__call__(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        path = request.path_info
        static_file = self.find_file(path) if self.autorefresh else self.files.get(path)
        if static_file is not None:
            return await sync_to_async(self.serve, thread_sensitive=False)(static_file, request)
        response = self.get_response(request)
        # An async handler's answer is awaitable (the check says so to the type checker).
        return await response if isawaitable(response) else response


def origin_key(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an origin such as "https://magi.example:8443"."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


def header(scope: Scope, name: bytes) -> str | None:
    headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
    for key, value in headers:
        if key.lower() == name:
            return value.decode("latin1")
    return None


def websocket_is_secure(scope: Scope) -> bool:
    """Whether the page's connection came over TLS: the scope's own scheme, or the TLS
    proxy's header when SECURE_PROXY_SSL_HEADER says to trust one (as for HTTP)."""
    if scope.get("scheme") == "wss":
        return True
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if not proxy_header:
        return False
    name, expected = proxy_header
    name = name.removeprefix("HTTP_").replace("_", "-").lower().encode()
    value = header(scope, name)
    return value is not None and value.split(",", 1)[0].strip() == expected


def served_origin(scope: Scope) -> tuple[str, str, int] | None:
    """The origin of the site this socket was opened on, from its Host header, when that
    host is one we serve."""
    host = header(scope, b"host")
    if not host:
        return None
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return None
    scheme = "https" if websocket_is_secure(scope) else "http"
    return origin_key(f"{scheme}://{host}")


def trusted_origin(origin: tuple[str, str, int]) -> bool:
    """Listed in CSRF_TRUSTED_ORIGINS, exactly or as a subdomain of https://*.example.com."""
    scheme, host, port = origin
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        wildcard = "://*." in trusted
        key = origin_key(trusted.replace("://*.", "://", 1))
        if key is None:
            continue
        if wildcard:
            if (scheme, port) == (key[0], key[2]) and host.endswith("." + key[1]):
                return True
        elif key == origin:
            return True
    return False


def websocket_origin_allowed(scope: Scope) -> bool:
    origin = header(scope, b"origin")
    key = origin_key(origin) if origin else None
    if key is None:
        return False
    return key == served_origin(scope) or trusted_origin(key)


class SameOriginWebsocket:
    """Refuse (HTTP 403, before the handshake) a websocket opened from any page but ours:
    another site, or another port or scheme of this host."""

    def __init__(self, application: Application) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and not websocket_origin_allowed(scope):
            await WebsocketDenier()(scope, receive, send)
            return
        await self.application(scope, receive, send)
