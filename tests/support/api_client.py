"""Calling the HTTP API as a program would: a bearer token on every request."""

from channels.layers import get_channel_layer
from django.conf import settings
from django.test import AsyncClient

from judgements.configuration import teams
from judgements.engine.runner import EngineRunner
from judgements.models import ApiToken, Team


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


def token_client(user, team: Team | None = None) -> TokenClient:
    """A client carrying a fresh API token of `user`, as a program holding one calls; a
    `team`'s token (a service token) when one is given."""
    token, key = ApiToken.issue(user, "tests")
    if team is not None:
        teams.assign(token, team)
    return TokenClient(f"Bearer {key}")


async def serve_one_wake_up() -> bool:
    """Stand in for a worker: take the next wake-up off the engine channel and run it."""
    message = await get_channel_layer().receive(settings.MAGI_ENGINE_CHANNEL)
    return await EngineRunner().run_judgement(message["judgement_id"])
