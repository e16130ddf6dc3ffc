"""Which provider serves which model.

A provider is an OpenAI-compatible endpoint with its own key, timeout, structured-output
mode, sampling and concurrency limit: the configured ones (MAGI_PROVIDERS in the settings), and
the local GGUF models, whose endpoint a server manager supplies once it has started them
(`llm/local/servers.py`). A provider set to discover its models lists them from its
`/v1/models`, cached here so a provider that is down does not slow the page.
"""

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from judgements.core.errors import MagiError
from judgements.core.settings_read import ProviderConfig
from judgements.llm import calls
from judgements.llm.completions import ModelRoute
from judgements.llm.local import provider as local_provider
from judgements.models.magi_settings import magi_settings

log = logging.getLogger(__name__)

LOCAL_PROVIDER = "local"


class UnknownModelError(MagiError):
    pass


def configured() -> dict[str, ProviderConfig]:
    """Every provider, local models last."""
    return dict(each_configured())


def each_configured() -> Iterator[tuple[str, ProviderConfig]]:
    """configured(), in its order, the local provider made only once it is reached: its
    model list looks at the disk (a stat and a package lookup), about 5% of the engine's
    event-loop CPU when every vote and check routed through it to a configured provider
    (bench/engine_cpu.py)."""
    providers: dict[str, ProviderConfig] = magi_settings.MAGI_PROVIDERS
    for name, provider in providers.items():
        yield name, local_provider.provider() if name == LOCAL_PROVIDER else provider
    if LOCAL_PROVIDER not in magi_settings.MAGI_PROVIDERS:
        yield LOCAL_PROVIDER, local_provider.provider()


@dataclass(frozen=True)
class Listing:
    models: tuple[str, ...]
    fetched_at: float  # time.monotonic()
    error: str | None = None


class ModelDiscovery:
    """The models each discovering provider listed last, refreshed in the background once
    they are older than MAGI_DISCOVERY_INTERVAL. Only the very first look waits for the
    endpoint, bounded by MAGI_DISCOVERY_TIMEOUT."""

    def __init__(self) -> None:
        self._listings: dict[str, Listing] = {}
        self._refreshing: set[str] = set()
        self._lock = threading.Lock()

    def models(self, name: str, provider: ProviderConfig) -> tuple[str, ...]:
        listing = self._listings.get(name)
        if listing is None:
            return self.refresh(name, provider).models
        if time.monotonic() - listing.fetched_at > magi_settings.MAGI_DISCOVERY_INTERVAL:
            self._refresh_in_background(name, provider)
        return listing.models

    def refresh(self, name: str, provider: ProviderConfig) -> Listing:
        """Ask the endpoint now. A failure keeps the models listed before, with the error."""
        previous = self._listings.get(name)
        try:
            found = calls.list_models(
                provider["base_url"], provider["api_key"], magi_settings.MAGI_DISCOVERY_TIMEOUT
            )
            listing = Listing(tuple(found), time.monotonic())
        except calls.LLMCallError as exc:
            log.warning("provider %s: could not list its models: %s", name, exc.cause)
            kept = previous.models if previous else ()
            listing = Listing(kept, time.monotonic(), exc.cause)
        self._listings[name] = listing
        return listing

    def _refresh_in_background(self, name: str, provider: ProviderConfig) -> None:
        with self._lock:
            if name in self._refreshing:
                return
            self._refreshing.add(name)

        def run() -> None:
            try:
                self.refresh(name, provider)
            finally:
                with self._lock:
                    self._refreshing.discard(name)

        threading.Thread(target=run, name=f"discover-{name}", daemon=True).start()

    def refresh_all(self) -> None:
        providers = configured()
        for name in discovering():
            self.refresh(name, providers[name])

    def problems(self) -> dict[str, str]:
        """Provider name -> why its models could not be listed, for the page."""
        return {name: listing.error for name, listing in self._listings.items() if listing.error}

    def forget(self) -> None:
        self._listings.clear()


discovery = ModelDiscovery()


def discovering() -> list[str]:
    """The providers that list their models themselves."""
    return [name for name, provider in configured().items() if provider.get("discover")]


def models_of(name: str, provider: ProviderConfig) -> list[str]:
    models = list(provider["models"])
    if provider.get("discover"):
        models += [m for m in discovery.models(name, provider) if m not in models]
    return models


def available_models() -> list[str]:
    """Every model this deployment can route, in a stable order."""
    names: list[str] = []
    for name, provider in configured().items():
        names.extend(m for m in models_of(name, provider) if m not in names)
    return names


def route_for(model: str) -> ModelRoute:
    for name, provider in each_configured():
        if model in models_of(name, provider):
            return ModelRoute(
                model=model,
                provider=name,
                base_url=provider["base_url"],
                api_key=provider["api_key"],
                structured_output=provider.get("structured_outputs", {}).get(
                    model, provider["structured_output"]
                ),
                timeout=provider["timeout"],
                # A per-model temperature (MAGI_MODEL_TEMPERATURES) beats its provider's.
                temperature=magi_settings.MAGI_MODEL_TEMPERATURES.get(
                    model, provider["temperature"]
                ),
                seed=provider["seed"],
                max_tokens=provider.get("max_tokens") or magi_settings.MAGI_LLM_MAX_TOKENS,
                concurrency=provider.get("concurrency"),
                server=provider.get("server"),
                logprobs=provider.get("logprobs", True),
            )
    known = ", ".join(available_models()) or "none configured"
    raise UnknownModelError(f"unknown model {model!r}; this deployment knows: {known}")
