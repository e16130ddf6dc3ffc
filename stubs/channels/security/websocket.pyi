# The consumer that refuses a websocket before its handshake (channels/security/
# websocket.py), which judgements/web/security.py answers a foreign origin with.

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

from channels.generic.websocket import AsyncWebsocketConsumer

class WebsocketDenier(AsyncWebsocketConsumer):
    # ASGI: a scope, a receive and a send, whose values channels leaves untyped.
    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[Mapping[str, Any]], Awaitable[None]],
    ) -> None: ...
