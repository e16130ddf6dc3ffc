# channels (4.x) ships no types: the part of its websocket consumer that
# judgements/web/consumers.py subclasses and calls, written from channels' source
# (channels/consumer.py, channels/generic/websocket.py). The rest of channels stays
# untyped to the checker.

from typing import Any, Protocol, TypedDict, type_check_only

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.contrib.sessions.backends.base import SessionBase

@type_check_only
class _URLRoute(TypedDict):
    # What the matched path's converters returned (Django types them as Any).
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

@type_check_only
class _ConsumerScope(TypedDict, total=False):
    # The ASGI websocket scope, with what channels' routing and AuthMiddlewareStack add
    # (the session and the user are lazy objects standing for these).
    type: str
    path: str
    query_string: bytes
    headers: list[tuple[bytes, bytes]]
    url_route: _URLRoute
    session: SessionBase
    user: AbstractBaseUser | AnonymousUser

@type_check_only
class _ChannelLayer(Protocol):
    # The group calls of channels.layers.BaseChannelLayer a consumer makes.
    async def group_add(self, group: str, channel: str) -> None: ...
    async def group_discard(self, group: str, channel: str) -> None: ...

class AsyncWebsocketConsumer:
    scope: _ConsumerScope
    # Set before connect() when the project configures a channel layer (this one does).
    channel_layer: _ChannelLayer
    channel_name: str

    def __init__(self, *args: object, **kwargs: object) -> None: ...
    # The ASGI application Django's path() is handed in a websocket route: Any, because
    # django-stubs types path()'s view as an HTTP view only.
    @classmethod
    def as_asgi(cls, **initkwargs: object) -> Any: ...
    async def connect(self) -> None: ...
    async def accept(
        self, subprotocol: str | None = None, headers: list[tuple[str, str]] | None = None
    ) -> None: ...
    async def send(
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False
    ) -> None: ...
    async def close(self, code: int | bool | None = None, reason: str | None = None) -> None: ...
    async def disconnect(self, code: int) -> None: ...
