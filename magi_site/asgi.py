"""ASGI entry point: HTTP through Django, websockets to the live page's consumer, and the
engine's worker channel. On the embedded default the engine worker starts inside this
process with the first connection, so one command runs everything."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.layers import get_channel_layer  # noqa: E402
from channels.routing import ChannelNameRouter, ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from judgements import routing, worker  # noqa: E402

router = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(
            AuthMiddlewareStack(URLRouter(routing.websocket_urlpatterns))
        ),
        "channel": ChannelNameRouter(routing.channel_routes),
    }
)


async def application(scope, receive, send):
    if settings.MAGI_ENGINE_IN_PROCESS and scope["type"] != "channel":
        worker.ensure_in_process_worker(router, get_channel_layer())
    return await router(scope, receive, send)
