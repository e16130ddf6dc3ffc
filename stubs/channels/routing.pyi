# The ASGI routers magi_site/asgi.py builds the application from (channels/routing.py).
# The applications they take are ASGI callables, whose values channels leaves untyped.

from collections.abc import Awaitable, Callable, Mapping, MutableMapping
from typing import Any

class ProtocolTypeRouter:
    def __init__(self, application_mapping: dict[str, Any]) -> None: ...
    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[Mapping[str, Any]], Awaitable[None]],
    ) -> None: ...

class URLRouter:
    def __init__(self, routes: list[Any]) -> None: ...
