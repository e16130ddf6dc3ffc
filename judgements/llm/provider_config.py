"""The shape of one provider in Django's settings (settings.MAGI_PROVIDERS[name]). It lives
with llm/, which reads it, and not with the site's settings that write it
(magi_site/model_settings.py re-exports it): the app imports nothing of the site, so the
layers point one way (docs/architecture.md)."""

from collections.abc import Awaitable, Callable
from typing import NotRequired, TypedDict


class ProviderConfig(TypedDict):
    """One provider as Django's settings hold it (settings.MAGI_PROVIDERS[name], written by
    MagiSettings.providers, read by judgements/llm/providers.py): its settings with the
    global defaults filled in. The local models' provider (judgements/llm/local/servers.py)
    has the same shape, its own answers' length, without logprobs, and the server MAGI
    starts for a model."""

    base_url: str | None
    api_key: str | None
    structured_output: str
    models: list[str]
    timeout: float
    temperature: float
    seed: int | None
    concurrency: int | None
    discover: bool
    logprobs: NotRequired[bool]
    max_tokens: NotRequired[int]
    server: NotRequired[Callable[[str], Awaitable[str]]]
