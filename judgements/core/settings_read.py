"""MAGI's own settings as the app reads them: every MAGI_* setting Django's settings hold,
with its type (`MagiSettingsRead`), and the shapes of the structured ones. Pure types: the
object the app reads them through is judgements/models/magi_settings.py's `magi_settings`.

The settings are described once, with their defaults and meanings, by `MagiSettings`
(magi_site/environment.py), which magi_site/settings.py turns into Django's settings. The
app imports nothing of the site (the layers point one way), so the names and types it
reads are declared here; tests/judgements/models/test_magi_settings.py holds each
declaration to its `MagiSettings` field and each value at start-up to its declared type.
They live in core/ because the site's settings import the shapes while Django starts,
before any model can be imported."""

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal, NotRequired, Protocol, TypedDict

from judgements.core.pricing import Price


class ProviderConfig(TypedDict):
    """One provider as Django's settings hold it (MAGI_PROVIDERS[name], written by
    MagiSettings.providers, read by judgements/llm/providers.py): its settings with the
    global defaults filled in. The local models' provider (judgements/llm/local/servers.py)
    has the same shape, its own answers' length, without logprobs, and the server MAGI
    starts for a model."""

    base_url: str | None
    api_key: str | None
    structured_output: str
    # A model's own mode, beating the provider's (the local models: provider.py).
    structured_outputs: NotRequired[dict[str, str]]
    models: list[str]
    timeout: float
    temperature: float
    seed: int | None
    concurrency: int | None
    discover: bool
    logprobs: NotRequired[bool]
    max_tokens: NotRequired[int]
    server: NotRequired[Callable[[str], Awaitable[str]]]


class TeamSetting(TypedDict):
    """A group that gives a team, as MAGI_OIDC_GROUPS holds it (magi_site/settings_kit.py
    GroupGrant, validated at start and dumped: a member or reviewer has a team, staff has
    none)."""

    team: str
    role: Literal["member", "reviewer"]


class StaffSetting(TypedDict):
    """A group that gives staff (no team)."""

    team: None
    role: Literal["staff"]


GroupSetting = TeamSetting | StaffSetting


class MagiSettingsRead(Protocol):
    """Every MAGI_* setting Django's settings hold, by area as docs/settings.md lists them."""

    # Site
    MAGI_VAR_DIR: Path
    MAGI_HTTPS: bool
    MAGI_HSTS_SECONDS: int
    MAGI_HSTS_PRELOAD: bool
    # Models and providers
    MAGI_MODELS: list[str] | None
    # Computed at start-up: each provider's endpoint, global defaults filled in.
    MAGI_PROVIDERS: dict[str, ProviderConfig]
    MAGI_LLM_TIMEOUT: float
    MAGI_LLM_MAX_ATTEMPTS: int
    MAGI_LLM_RETRY_INITIAL_WAIT: float
    MAGI_LLM_RETRY_MAX_WAIT: float
    MAGI_LLM_MAX_TOKENS: int
    MAGI_LLM_TEMPERATURE: float
    MAGI_LLM_SEED: int | None
    MAGI_MODEL_TEMPERATURES: dict[str, float]
    MAGI_DISCOVERY_INTERVAL: float
    MAGI_DISCOVERY_TIMEOUT: float
    # Local models
    MAGI_LOCAL_MODELS: dict[str, str]
    MAGI_INSTALLED_MODELS_DIR: str
    MAGI_LOCAL_SERVER_START_TIMEOUT: float
    MAGI_LOCAL_TIMEOUT: float
    MAGI_LOCAL_CONTEXT_TOKENS: int
    MAGI_LOCAL_THREADS: int
    MAGI_LOCAL_RUNTIME: Literal["xllamacpp", "llama-cpp-python"]
    MAGI_LOCAL_PARALLEL: int
    MAGI_LOCAL_FIXED_JSON: list[str]
    # Input and abuse limits
    MAGI_CONTENT_MAX_CHARS: int
    MAGI_SUITE_MAX_CASES: int
    MAGI_MAX_BODY_BYTES: int
    MAGI_RATE_WINDOW_SECONDS: int
    MAGI_RATE_LIMIT_PER_USER: int
    MAGI_RATE_LIMIT_PER_TOKEN: int
    MAGI_UNFINISHED_PER_USER: int
    MAGI_UNFINISHED_RUNS_PER_USER: int
    MAGI_IDEMPOTENCY_HOURS: float
    # Verdicts, evaluations and webhooks
    MAGI_HOLD_CONTESTED: bool
    MAGI_HOLD_UNMEASURED: bool
    MAGI_CONFIDENCE_PROBE: bool | None
    MAGI_SECOND_OPINION: bool | None
    MAGI_INJECTION_SCREEN: bool | None
    MAGI_CHECK_MODEL: str
    # Dumped from the validated ModelPrice at start-up.
    MAGI_MODEL_PRICES: dict[str, Price]
    MAGI_WEBHOOK_HOSTS: list[str]
    MAGI_WEBHOOK_TIMEOUT: float
    MAGI_WEBHOOK_MAX_ATTEMPTS: int
    MAGI_WEBHOOK_RETRY_INITIAL_WAIT: float
    MAGI_WEBHOOK_RETRY_MAX_WAIT: float
    MAGI_SLACK_API_URL: str
    MAGI_SLACK_TIMEOUT: float
    MAGI_SLACK_MAX_ATTEMPTS: int
    # Audit log and receipts
    MAGI_AUDIT_SIGNING_KEY: str
    MAGI_AUDIT_RETIRED_KEYS: list[str]
    MAGI_AUDIT_LOG_ORIGIN: str
    MAGI_AUDIT_LOG_INTERVAL: float
    MAGI_AUDIT_LOG_BATCH: int
    MAGI_AUDIT_CHECKPOINT_DIR: str
    MAGI_AUDIT_CHECKPOINT_WEBHOOKS: list[str]
    MAGI_AUDIT_CHECKPOINT_WEBHOOK_SECRET: str
    # Notifications
    MAGI_SITE_URL: str
    # Operations
    MAGI_METRICS_TOKEN: str
    # Sign-in with OpenID Connect
    MAGI_OIDC_ISSUER: str
    MAGI_OIDC_CLIENT_ID: str
    MAGI_OIDC_CLIENT_SECRET: str
    MAGI_OIDC_SCOPES: list[str]
    MAGI_OIDC_GROUPS_CLAIM: str
    # Dumped from the validated GroupGrant at start-up.
    MAGI_OIDC_GROUPS: dict[str, GroupSetting]
    MAGI_OIDC_PROVIDER_NAME: str
    MAGI_OIDC_BREAK_GLASS_USER: str
    MAGI_OIDC_LOCAL_PASSWORDS: bool
    MAGI_OIDC_SESSION_SECONDS: int
    MAGI_OIDC_TIMEOUT: float
    # Engine (the two computed at start-up are no longer "unset": in process without
    # Redis, 8 database threads, 1 on SQLite)
    MAGI_ENGINE_IN_PROCESS: bool
    MAGI_LEASE_SECONDS: float
    MAGI_SWEEP_INTERVAL: float
    MAGI_DB_RETRY_SECONDS: float
    MAGI_JUDGEMENT_TIMEOUT: float
    MAGI_WORKER_CONCURRENCY: int
    MAGI_DB_THREADS: int
    MAGI_CHANNEL_SEND_TIMEOUT: float
    MAGI_WS_RESYNC_SECONDS: float
    # Not a setting of the environment: the channel the engine's workers listen on.
    MAGI_ENGINE_CHANNEL: str
