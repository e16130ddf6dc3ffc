"""The MCP tools served by MAGI itself at /mcp, over the SDK's streamable HTTP transport.

Each request is authenticated with the caller's API token, as the HTTP API's are, and the
tools act as that user through the same services: the same validation, permissions,
rate limits and idempotency keys (intake/start.py). Stateless: each POST stands alone, so
any web process can serve it.
"""

import asyncio
import contextlib
import contextvars
import json
from collections.abc import Mapping

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import Receive, Scope, Send

from judgements.agent_tools.tools import JudgeRequest, ToolRefused, build
from judgements.core.errors import InvalidInput, Refused
from judgements.core.json_values import JsonObject
from judgements.infrastructure import events
from judgements.infrastructure.database import db_call
from judgements.intake import idempotency, schemas, start
from judgements.intake.schemas import CaseWithCallback
from judgements.models import ApiToken
from judgements.models.magi_settings import magi_settings
from judgements.outcome import panel_answers
from judgements.outcome.results import find_visible, result_of

PATH = "/mcp"
# Who is calling, and the site's address as they reached it: set for each request.
caller: contextvars.ContextVar[ApiToken] = contextvars.ContextVar("magi_mcp_caller")
site: contextvars.ContextVar[str] = contextvars.ContextVar("magi_mcp_site")


class InAppBackend:
    def __init__(self, token: ApiToken, base_url: str) -> None:
        self.token = token
        self.base_url = base_url

    async def judge(self, case: JudgeRequest, key: str, wait: float) -> JsonObject:
        user = self.token.user
        by = start.Submission(creator=user, api_token=self.token, key=key, body=case)
        try:
            # Validated where it comes in, by the one model of a case with a callback, as
            # the API's body is (intake/schemas.py).
            validated = schemas.validated(CaseWithCallback, case)
            started = await start.submit_from_loop([validated.case()], by)
        except InvalidInput as exc:
            raise ToolRefused(f"invalid input: {exc}") from None
        except Refused as exc:
            raise ToolRefused(f"{exc.message} (retry after {exc.retry_after} s)") from None
        except idempotency.KeyReused as exc:
            raise ToolRefused(exc.message) from None
        judgement_id = started.judgement.pk
        await events.wait_until_finished(judgement_id, wait)
        return (await db_call(result_of, for_request=True)(judgement_id)).as_json()

    async def read(self, judgement_id: int, wait: float) -> JsonObject:
        if await db_call(find_visible, for_request=True)(judgement_id, self.token.user) is None:
            raise ToolRefused(f"No judgement {judgement_id}.")
        await events.wait_until_finished(judgement_id, wait)
        return (await db_call(result_of, for_request=True)(judgement_id)).as_json()

    async def panels(self) -> list[Mapping[str, object]]:
        panels = await db_call(panel_answers.listing, for_request=True)(self.token.user)
        return [panel.model_dump(mode="json") for panel in panels]

    def page_url(self, judgement_id: int) -> str:
        return f"{self.base_url}/judgements/{judgement_id}/"


def token_of(headers: dict[bytes, bytes]) -> ApiToken | None:
    scheme, _, key = headers.get(b"authorization", b"").decode("latin-1").partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        return None
    return ApiToken.active(key.strip())


def base_url(scope: Scope, headers: dict[bytes, bytes]) -> str:
    """The site as the caller reached it, when its Host is one the site answers to."""
    host = headers.get(b"host", b"").decode("latin-1")
    if host and validate_host(split_domain_port(host)[0], settings.ALLOWED_HOSTS):
        scheme = "https" if magi_settings.MAGI_HTTPS else scope.get("scheme", "http")
        return f"{scheme}://{host}"
    server_host, port = scope.get("server") or ("127.0.0.1", 80)
    return f"http://{server_host}:{port}"


class McpEndpoint:
    """ASGI app for /mcp: the bearer token first (401 without one), then the SDK's app.

    The SDK's session manager needs a running task group, which an ASGI server starts
    through the lifespan protocol; daphne does not speak it, so it is started on first
    use and kept for the process's life."""

    def __init__(self) -> None:
        server = build(lambda: InAppBackend(caller.get(), site.get()))
        self.app = server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            # The bearer token is the protection here: no ambient credential a rebinding
            # page could ride on.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.ready: asyncio.Future[None] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        token = await db_call(token_of, for_request=True)(headers)
        if token is None:
            await refuse(send)
            return
        await self.running()
        caller.set(token)
        site.set(base_url(scope, headers))
        await self.app(scope, receive, send)

    async def running(self) -> None:
        if self.ready is None:
            self.ready = asyncio.get_running_loop().create_future()
            asyncio.get_running_loop().create_task(self.keep_running(self.ready))
        await asyncio.shield(self.ready)

    async def keep_running(self, ready: asyncio.Future[None]) -> None:
        lifespan = self.app.router.lifespan_context(self.app)
        async with lifespan:
            ready.set_result(None)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()


async def refuse(send: Send) -> None:
    body = json.dumps({"error": "Send an API token: Authorization: Bearer <token>."}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="magi"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
