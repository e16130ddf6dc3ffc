"""Calling the HTTP API as a program would: a bearer token on every request."""

from channels.layers import get_channel_layer
from django.conf import settings
from django.test import AsyncClient

from judgements.engine.runner import EngineRunner
from judgements.models import ApiToken


class TokenClient(AsyncClient):
    """Sends the token on every request. (AsyncClient's own headers= default comes out as
    Http-Authorization in Django 5.2, so it goes per request.)"""

    def __init__(self, authorization: str | None) -> None:
        super().__init__()
        self.authorization = authorization

    def generic(self, *args, headers=None, **kwargs):
        headers = dict(headers or {})
        if self.authorization:
            headers["Authorization"] = self.authorization
        return super().generic(*args, headers=headers, **kwargs)


def token_client(user) -> TokenClient:
    """A client carrying a fresh API token of `user`, as a program holding one calls."""
    return TokenClient(f"Bearer {ApiToken.issue(user, 'tests')[1]}")


async def serve_one_wake_up() -> bool:
    """Stand in for a worker: take the next wake-up off the engine channel and run it."""
    message = await get_channel_layer().receive(settings.MAGI_ENGINE_CHANNEL)
    return await EngineRunner().run_judgement(message["judgement_id"])
