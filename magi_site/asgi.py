"""ASGI entry point: HTTP through Django (/mcp through the MCP SDK), websockets to the
live page's consumer. On the
embedded default the engine starts inside this process with the first connection, so one
command runs everything."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402 - after Django is set up
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402 - after Django is set up

from judgements.agent_tools.in_app import PATH as MCP_PATH  # noqa: E402 - after Django is set up
from judgements.agent_tools.in_app import McpEndpoint  # noqa: E402 - after Django is set up
from judgements.engine import worker  # noqa: E402 - after Django is set up
from judgements.models.magi_settings import magi_settings  # noqa: E402 - after Django is set up
from judgements.web import routing  # noqa: E402 - after Django is set up
from judgements.web.security import Receive, SameOriginWebsocket, Scope, Send  # noqa: E402 - after Django is set up

mcp = McpEndpoint()


async def http(scope: Scope, receive: Receive, send: Send) -> None:
    """Django, but /mcp (the tools for AI agents) goes to the MCP SDK's app."""
    if scope["path"].rstrip("/") == MCP_PATH:
        return await mcp(scope, receive, send)
    return await django_asgi_app(scope, receive, send)


router = ProtocolTypeRouter(
    {
        "http": http,
        "websocket": SameOriginWebsocket(
            AuthMiddlewareStack(URLRouter(routing.websocket_urlpatterns))
        ),
    }
)


async def application(scope: Scope, receive: Receive, send: Send) -> None:
    if magi_settings.MAGI_ENGINE_IN_PROCESS:
        worker.in_process.ensure_running()
    await router(scope, receive, send)
