"""MAGI's settings, written once: every environment variable MAGI reads, typed, with
its default and meaning (`MagiSettings`). A value that does not parse, or a `MAGI_*` name
MAGI does not know, stops start-up with a message naming the variable. Django's settings
(magi_site/settings.py) are read from it, and so is docs/settings.md.

The defaults run on one machine with no services: SQLite, the in-memory channel
layer and the engine inside the web process. DATABASE_URL and REDIS_URL switch to
PostgreSQL and channels-redis for several processes or machines.
"""

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, cast
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonDict
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

BASE_DIR = Path(__file__).resolve().parent.parent

StructuredOutput = Literal["json_schema", "json_object", "prompt"]
# Comma-separated in the environment ("a,b"), not JSON.
CommaList = Annotated[list[str], NoDecode]
# name=value pairs separated by commas ("tiny=/models/tiny.gguf,big=/models/big.gguf").
PairMap = Annotated[dict[str, str], NoDecode]
FloatMap = Annotated[dict[str, float], NoDecode]
OIDC_ROLES = ("member", "reviewer", "staff")


# Before-validators: each is given what the environment holds (a string) or a default.


def split_list(value: Any) -> Any:
    if isinstance(value, str):
        return items_of(value)
    return value


def items_of(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def split_pairs(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    mapping = {}
    for item in items_of(value):
        key, sep, rest = item.partition("=")
        if not sep or not key.strip() or not rest.strip():
            raise ValueError(f"entries look like name=value, not {item!r}")
        mapping[key.strip()] = rest.strip()
    return mapping


class SettingRefused(ImproperlyConfigured):
    """A setting in the environment that MAGI refuses; the message names it. manage.py says
    it in one line (exit 2) instead of a traceback."""


def parse_seed(value: Any) -> Any:
    """A seed is a whole number; "none" (or "off") sends none, for providers that refuse it."""
    if isinstance(value, str) and value.strip().lower() in {"none", "off"}:
        return None
    return value


def parse_json_object(value: Any) -> Any:
    """A JSON object in the environment; a ValueError (naming the variable) otherwise."""
    if not isinstance(value, str):
        return value
    try:
        parsed = json.loads(value)
    except ValueError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    if not isinstance(parsed, dict):
        raise ValueError("must be a JSON object")
    return parsed


class GroupGrant(BaseModel):
    """What one provider group gives: membership of a team, reviewing its panels too, or
    staff (no team)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    team: str | None
    role: Literal["member", "reviewer", "staff"]


def parse_group_map(value: Any) -> Any:
    """`group=Team:role,other=staff` -> {group: GroupGrant}; a ValueError names the entry."""
    if not isinstance(value, str):
        return value
    grants = {}
    for group, given in split_pairs(value).items():
        team, sep, role = given.rpartition(":")
        if not sep:
            team, role = "", given
        team, role = team.strip(), role.strip()
        if role not in OIDC_ROLES:
            raise ValueError(f"{group}: the role is member, reviewer or staff, not {role!r}")
        if (role == "staff") != (not team):
            raise ValueError(
                f"{group}: staff takes no team (`group=staff`)"
                if team
                else f"{group}: a {role} needs a team (`group=Team:{role}`)"
            )
        grants[group] = GroupGrant(team=team or None, role=role)
    return grants


GroupMap = Annotated[dict[str, GroupGrant], NoDecode]


class ModelPrice(BaseModel):
    """A model's price in USD per million tokens. Cached prompt tokens cost `cached` when
    given, else the prompt price."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)
    cached: float | None = Field(default=None, ge=0)


def setting(default: Any, doc: str, *, shown: str | None = None, **bounds: Any) -> Any:
    """A setting: its default, what it means (the documentation's words), and how the
    documentation shows a default computed at start-up (`shown`)."""
    extra: JsonDict | None = {"shown": shown} if shown is not None else None
    return Field(default=default, description=doc, json_schema_extra=extra, **bounds)


class Env(BaseSettings):
    # Empty variables count as unset, so `FOO=` in a shell file means "the default".
    model_config = SettingsConfigDict(env_ignore_empty=True, extra="ignore", frozen=True)


class ProviderSettings(Env):
    """One OpenAI-compatible endpoint: MAGI_DEFAULT_* or MAGI_PROVIDER_<NAME>_*.
    Unset values fall back to MAGI's global LLM settings (see MagiSettings.providers)."""

    base_url: str | None = setting(None, "the endpoint, `https://host/v1`", shown="the SDK's")
    api_key: str | None = setting(None, "its key", shown="the SDK's")
    models: CommaList = setting([], "the models it serves, comma-separated")
    structured_output: StructuredOutput = setting(
        "json_schema",
        "`json_schema` (OpenAI, vLLM), `json_object` (llama.cpp's Python server: schema "
        "inside `json_object`), or `prompt` (ask for JSON in the prompt and validate)",
    )
    timeout: float | None = setting(None, "seconds per call", shown="`MAGI_LLM_TIMEOUT`", gt=0)
    temperature: float | None = setting(
        None, "sampling temperature", shown="`MAGI_LLM_TEMPERATURE`", ge=0, le=2
    )
    seed: int | Literal["inherit"] | None = setting(
        "inherit",
        "seed; `none` for a provider that refuses the `seed` parameter",
        shown="`MAGI_LLM_SEED`",
    )
    concurrency: int | None = setting(
        None,
        "at most this many calls in flight to the provider at once (a rate-limited API, a "
        "small GPU server); more wait in MAGI, so their wait does not count against the "
        "call's timeout",
        shown="no limit",
        ge=1,
    )
    discover: bool = setting(
        False,
        "`true`: offer every model the provider lists at `GET /v1/models` (Ollama, vLLM, "
        "llama.cpp, LM Studio, OpenAI), beside any in `_MODELS`",
    )
    logprobs: bool = setting(
        True,
        "ask for token log-probabilities (`logprobs`, `top_logprobs`), the agents' own "
        "confidence; `false` for a provider that refuses them (MAGI also notices one that "
        "answers HTTP 400 to them, or without them, and stores the confidence as unknown)",
    )

    _split_models = field_validator("models", mode="before")(split_list)
    _parse_seed = field_validator("seed", mode="before")(parse_seed)


class MagiSettings(Env):
    """Every environment variable MAGI reads, with its type, default and meaning: the one
    description of MAGI's settings. magi_site/settings.py turns it into Django's settings,
    and `python -m magi_site.environment` writes docs/settings.md from it."""

    # --- Site
    debug: bool = setting(
        False, "Django debug mode; a throwaway key is generated when `SECRET_KEY` is missing"
    )
    secret_key: str = setting(
        "",
        "Django's key; missing with `DEBUG` off is a startup error (`make run` makes one in "
        "`var/secret-key`, which `manage.py` reads too)",
        shown="—",
    )
    allowed_hosts: CommaList = setting(
        ["localhost", "127.0.0.1", "[::1]"], "host names the site answers to, comma-separated"
    )
    csrf_trusted_origins: CommaList = setting([], "origins trusted for form posts, comma-separated")
    time_zone: str = setting("UTC", "the time zone dates are shown in")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = setting(
        "INFO", "the least severe log lines written"
    )
    static_root: Path | None = setting(
        None, "where `collectstatic` puts static files", shown="`var/static`"
    )
    database_url: str = setting(
        "", "PostgreSQL (`postgres://user:pass@host/db`); SQLite when unset", shown="—"
    )
    redis_url: str = setting("", "channels-redis layer; the in-memory layer when unset", shown="—")
    magi_var_dir: Path = setting(
        BASE_DIR / "var",
        "where SQLite, static files, the secret key and the admin password live",
        shown="`var/`",
    )
    magi_https: bool = setting(
        False,
        "served over HTTPS behind a TLS proxy: trusts the proxy's `X-Forwarded-Proto: "
        "https`, redirects plain HTTP to HTTPS (not `/healthz`), sends HSTS, marks the "
        "session and CSRF cookies Secure; `manage.py check --deploy` is then clean",
    )
    magi_hsts_seconds: int = setting(
        31_536_000,
        "with `MAGI_HTTPS`: how long browsers keep to HTTPS (subdomains included)",
        ge=0,
    )
    magi_hsts_preload: bool = setting(
        False,
        "with `MAGI_HTTPS`: ask for the browsers' preload list (only once you mean to "
        "submit the domain)",
    )

    # --- Models and providers
    openai_api_key: str = setting(
        "",
        "the default provider's key, read by the `openai` SDK (as is `OPENAI_BASE_URL`)",
        shown="—",
    )
    magi_models: CommaList | None = setting(
        None,
        "models served by the default provider, comma-separated",
        shown="`gpt-4o-mini` when `OPENAI_API_KEY` is set, else none",
    )
    magi_providers: CommaList = setting(
        [], "more providers by name, e.g. `vllm,ollama`; each set by `MAGI_PROVIDER_<NAME>_*`"
    )
    magi_llm_timeout: float = setting(60.0, "seconds per call (every provider's default)", gt=0)
    # "Retried up to 3 times": four attempts in all per (agent, round).
    magi_llm_max_attempts: int = setting(4, "attempts per call (1 + retries)", ge=1)
    magi_llm_retry_initial_wait: float = setting(
        1.0, "seconds before the first retry, doubled after each", ge=0
    )
    magi_llm_retry_max_wait: float = setting(20.0, "the longest wait between retries", ge=0)
    magi_llm_max_tokens: int = setting(400, "`max_tokens` per call", ge=16)
    magi_llm_temperature: float = setting(
        0.0,
        "sampling temperature sent with every call (every provider's default): greedy, so "
        "the same judgement gives the same votes",
        ge=0,
        le=2,
    )
    magi_llm_seed: int | None = setting(
        0, "seed sent with every call (every provider's default); `none` sends no seed"
    )
    magi_model_temperatures: FloatMap = setting(
        {}, "per-model temperature, beating its provider's: `gpt-4.1=0.2,qwen=0.7`"
    )
    magi_discovery_interval: float = setting(
        300.0,
        "seconds after which a discovered model list is refreshed in the background",
        gt=0,
    )
    magi_discovery_timeout: float = setting(
        3.0, "the longest the first look at a provider's list (and Refresh) waits", gt=0
    )

    # --- Local models (a llama.cpp server MAGI starts)
    magi_local_models: PairMap = setting(
        {},
        "your own GGUF files as models: `name=/path/a.gguf,other=/path/b.gguf`, served like "
        "the bundled model",
    )
    magi_installed_models_dir: str = setting(
        "",
        "where `scripts/install-local-model.sh NAME` puts a model and MAGI finds it by its "
        "name (empty: the virtualenv's `share/magi/`, beside the bundled model)",
    )
    magi_local_server_start_timeout: float = setting(
        120.0, "seconds to wait for a local server to come up", gt=0
    )
    magi_local_timeout: float = setting(
        120.0, "seconds per local call (a CPU model reads a long prompt slowly)", gt=0
    )
    # SmolLM2 was trained on 8192 tokens; the longest content MAGI accepts plus the prompt
    # around it needs more than llama.cpp's default of 2048.
    magi_local_context_tokens: int = setting(8192, "a local server's context, in tokens", ge=512)
    magi_local_threads: int = setting(0, "CPU threads per local server; 0: all cores", ge=0)
    magi_local_runtime: Literal["xllamacpp", "llama-cpp-python"] = setting(
        "xllamacpp",
        "`xllamacpp` (prebuilt, parallel slots) or `llama-cpp-python` (built from source)",
    )
    magi_local_parallel: int = setting(
        3, "calls one local server answers at once (parallel slots)", ge=1
    )

    # --- Input and abuse limits (each new judgement costs nine LLM calls)
    magi_content_max_chars: int = setting(
        20_000, "longest content, in characters (see [limits](limits.md))", ge=1
    )
    magi_suite_max_cases: int = setting(500, "most cases one evaluation suite may hold", ge=1)
    magi_max_body_bytes: int = setting(
        1_000_000,
        "largest request body (form post or API JSON), in bytes; larger API bodies get 413 "
        "JSON, a larger page form a 413 page that says so (nothing is saved; Back keeps "
        "what was typed)",
        ge=10_000,
    )
    magi_rate_window_seconds: int = setting(
        60, "the window the two rate limits count in, in seconds", ge=1
    )
    magi_rate_limit_per_user: int = setting(
        20, "judgements a user (page and API together) may start per window; 0: no limit", ge=0
    )
    magi_rate_limit_per_token: int = setting(
        20, "judgements one API token may start per window; 0: no limit", ge=0
    )
    magi_unfinished_per_user: int = setting(
        20, "judgements a user may have queued or running at once; 0: no limit", ge=0
    )
    magi_unfinished_runs_per_user: int = setting(
        2, "evaluation runs a user may have under way at once; 0: no limit", ge=0
    )
    magi_idempotency_hours: float = setting(
        24.0, "how long an API `Idempotency-Key` is remembered, in hours", gt=0
    )

    # --- Verdicts, evaluations and webhooks
    magi_hold_contested: bool = setting(
        False,
        "hold a contested verdict for a person (status `held`) when neither the case nor "
        "its saved panel says ([contested.md](contested.md))",
    )
    magi_hold_unmeasured: bool = setting(
        False,
        "hold a verdict whose trust is not measured (its panel holds no certificate for "
        "these agents, and nothing contests it) for a person, as contested ones are held "
        "([contested.md](contested.md))",
    )
    # The checks beside the vote (judgements/core/checks.py): on, off, or unset, when each
    # runs only where it can inform the verdict.
    magi_confidence_probe: bool | None = setting(
        None,
        "ask each agent, beside round 1, its decision in one word, for its confidence "
        "from the token log-probabilities (three short calls a judgement). `true`: every "
        "judgement; `false`: none; unset: only where it can inform the verdict (the "
        "panel's certificate reads the probe confidence, or an evaluation run)",
        shown="unset",
    )
    magi_second_opinion: bool | None = setting(
        None,
        "one call a judgement, beside round 1, that reads the content against all three "
        "criteria; its disagreement with the panel contests the verdict. `true`: every "
        "judgement; `false`: none; unset: only where it can inform the verdict (the "
        "panel's certificate reads its signal, the saved panel asks for it, or an "
        "evaluation run). A saved panel may turn it off or on",
        shown="unset",
    )
    magi_injection_screen: bool | None = setting(
        None,
        "one call a judgement, before the vote, that asks the model to repeat a random "
        "word and ignore the content; a reply without it contests the verdict. `true`: "
        "every judgement; `false`: none; unset: only where it can inform the verdict (the "
        "panel's certificate reads its signal, the saved panel asks for it, or an "
        "evaluation run). A saved panel may turn it off or on",
        shown="unset",
    )
    magi_check_model: str = setting(
        "",
        "the model the second opinion and the injection screen ask",
        shown="the first agent's",
    )
    magi_model_prices: Annotated[dict[str, ModelPrice], NoDecode] = setting(
        {},
        "USD per million tokens per model, for the cost in evaluation reports: a JSON "
        'object `{"gpt-4o-mini": {"prompt": 0.15, "completion": 0.6, "cached": 0.075}}` '
        "(`cached`, optional, prices the prompt tokens a provider served from its cache). "
        "A report's cost is empty when a model it used has no price",
    )
    magi_webhook_hosts: CommaList = setting(
        [],
        "hosts a `callback_url` may name, comma-separated: `hooks.example.com`, "
        "`*.example.com` (subdomains), https only; `http://host` also allows plain http "
        "for that exact host; empty refuses every webhook",
    )
    magi_webhook_timeout: float = setting(
        10.0, "seconds to wait for a webhook receiver's answer", gt=0
    )
    magi_webhook_max_attempts: int = setting(
        8, "attempts per webhook before it is marked failed", ge=1
    )
    magi_webhook_retry_initial_wait: float = setting(
        10.0, "seconds before a webhook's second attempt, doubled after each failure", ge=0
    )
    magi_webhook_retry_max_wait: float = setting(
        3600.0, "the longest wait between a webhook's attempts", ge=0
    )

    # --- Audit chain and receipts ([evidence.md](evidence.md))
    magi_audit_signing_key: str = setting(
        "",
        "the Ed25519 key that signs receipts and the chain's head: its 32-byte private seed "
        "in base64url (`manage.py audit new-key` prints one); unset, MAGI makes and keeps "
        "one in `var/audit-signing-key`",
        shown="—",
    )
    magi_audit_retired_keys: CommaList = setting(
        [],
        "public keys of earlier signing keys, kept for checking old receipts: base64url "
        "Ed25519 public keys, comma-separated (`manage.py audit rotate-key` keeps the "
        "embedded default's in `var/audit-retired-keys`)",
        shown="— (none)",
    )

    # --- Notifications
    email_host: str = setting(
        "",
        "the SMTP server that sends reviewers their notifications; unset, nobody is emailed",
        shown="— (off)",
    )
    email_port: int = setting(25, "the SMTP server's port", ge=1, le=65535)
    email_host_user: str = setting("", "the SMTP user name", shown="—")
    email_host_password: str = setting("", "the SMTP password", shown="—")
    email_use_tls: bool = setting(False, "STARTTLS to the SMTP server")
    default_from_email: str = setting("magi@localhost", "the sender of MAGI's emails")
    magi_site_url: str = setting(
        "http://localhost:8000",
        "the address people open MAGI at, for the links in emails (no trailing slash)",
    )

    # --- Operations
    magi_metrics_token: str = setting(
        "",
        "the bearer token Prometheus sends to scrape `/metrics`; unset, `/metrics` answers "
        "404 (metrics are not open to the world by default)",
        shown="— (off)",
    )

    # --- Sign-in with OpenID Connect ([sign-in.md](sign-in.md))
    magi_oidc_issuer: str = setting(
        "",
        "the identity provider's issuer URL (its discovery document is this plus "
        "`/.well-known/openid-configuration`); unset, people sign in with MAGI's own "
        "passwords as before",
        shown="— (off)",
    )
    magi_oidc_client_id: str = setting(
        "", "MAGI's client id at the provider (required with the issuer)", shown="—"
    )
    magi_oidc_client_secret: str = setting(
        "", "MAGI's client secret at the provider (required with the issuer)", shown="—"
    )
    magi_oidc_scopes: CommaList = setting(
        ["openid", "email", "profile"],
        "the scopes asked for, comma-separated; must include `openid`",
    )
    magi_oidc_groups_claim: str = setting(
        "groups", "the ID token's claim that lists the person's groups"
    )
    magi_oidc_groups: GroupMap = setting(
        {},
        "which groups give what, comma-separated `group=Team:role` (role `member` or "
        "`reviewer` of the team's panels) or `group=staff`; a person in none is refused "
        "(required with the issuer)",
    )
    magi_oidc_provider_name: str = setting(
        "your organisation's sign-in", "the provider's name on the sign-in button"
    )
    magi_oidc_break_glass_user: str = setting(
        "",
        "with OIDC, the one superuser who may still sign in with a MAGI password (for when "
        "the provider is down); everyone else's password is refused",
        shown="— (nobody)",
    )
    magi_oidc_local_passwords: bool = setting(
        False,
        "with OIDC, let everyone still sign in with a MAGI password too (while moving over; "
        "contradicts `MAGI_OIDC_BREAK_GLASS_USER`)",
    )
    magi_oidc_session_seconds: int = setting(
        28_800,
        "how long a provider sign-in lasts before the provider is asked again, counted from "
        "the last completed sign-in: the longest a person removed there keeps MAGI's pages",
        ge=60,
    )
    magi_oidc_timeout: float = setting(
        5.0, "seconds to wait for the provider's discovery document, keys and tokens", gt=0
    )

    # --- Engine
    magi_engine_in_process: bool | None = setting(
        None,
        "run the engine inside the web process (without Redis there is one process)",
        shown="on without `REDIS_URL`",
    )
    magi_lease_seconds: float = setting(
        30.0, "how long a worker's claim on a judgement lasts unless renewed", gt=0
    )
    magi_sweep_interval: float = setting(
        10.0, "seconds between a worker's looks for queued or abandoned judgements", gt=0
    )
    magi_db_retry_seconds: float = setting(
        30.0, "how long the engine rides out an unreachable database", ge=0
    )
    magi_judgement_timeout: float = setting(
        1800.0,
        "a judgement not finished this long after its first claim ends in Error",
        gt=0,
    )
    magi_worker_concurrency: int = setting(
        200, "judgements one worker process runs at once; more wait in the database", ge=1
    )
    magi_db_threads: int | None = setting(
        None,
        "database connections per process for the engine's queries (SQLite has one "
        "writer, so more only wait on its lock)",
        shown="8 (1 on SQLite)",
        ge=1,
    )
    magi_channel_send_timeout: float = setting(
        2.0, "the longest wait for the channel layer per event", gt=0
    )
    magi_ws_resync_seconds: float = setting(
        15.0, "how often an open live page re-joins its group and resyncs", gt=0
    )

    _split_lists = field_validator(
        "allowed_hosts",
        "csrf_trusted_origins",
        "magi_models",
        "magi_providers",
        "magi_webhook_hosts",
        "magi_oidc_scopes",
        "magi_audit_retired_keys",
        mode="before",
    )(split_list)
    _parse_groups = field_validator("magi_oidc_groups", mode="before")(parse_group_map)
    _split_pairs = field_validator("magi_local_models", "magi_model_temperatures", mode="before")(
        split_pairs
    )
    _parse_seed = field_validator("magi_llm_seed", mode="before")(parse_seed)
    _parse_prices = field_validator("magi_model_prices", mode="before")(parse_json_object)

    @property
    def engine_in_process(self) -> bool:
        if self.magi_engine_in_process is None:
            return not self.redis_url
        return self.magi_engine_in_process

    @property
    def db_threads(self) -> int:
        return self.magi_db_threads or (8 if self.database_url else 1)

    def providers(self) -> dict[str, dict]:
        """Provider name -> its endpoint settings, global defaults filled in."""
        default_models = "gpt-4o-mini" if self.openai_api_key else ""
        configured = {"default": read_provider("MAGI_DEFAULT_")}
        for name in self.magi_providers:
            configured[name.lower()] = read_provider(f"MAGI_PROVIDER_{name.upper()}_")
        providers = {}
        for name, provider in configured.items():
            models = provider.models
            if name == "default" and not models:
                models = self.magi_models if self.magi_models is not None else []
                models = models or items_of(default_models)
            providers[name] = {
                # None lets the SDK read OPENAI_BASE_URL / OPENAI_API_KEY itself.
                "base_url": provider.base_url,
                "api_key": provider.api_key,
                "structured_output": provider.structured_output,
                "models": models,
                "timeout": provider.timeout or self.magi_llm_timeout,
                "temperature": (
                    self.magi_llm_temperature
                    if provider.temperature is None
                    else provider.temperature
                ),
                "seed": self.magi_llm_seed if provider.seed == "inherit" else provider.seed,
                "concurrency": provider.concurrency,
                "discover": provider.discover,
                "logprobs": provider.logprobs,
            }
        return providers

    def django_settings(self) -> dict:
        """Every MAGI_* setting as Django reads it (`settings.MAGI_LEASE_SECONDS`; tests
        override them there), with the values computed at start-up filled in."""
        values = {
            name.upper(): getattr(self, name)
            for name in type(self).model_fields
            if name.startswith("magi_")
        }
        values.update(
            MAGI_PROVIDERS=self.providers(),
            MAGI_MODEL_PRICES={
                model: price.model_dump() for model, price in self.magi_model_prices.items()
            },
            MAGI_OIDC_GROUPS={
                group: grant.model_dump() for group, grant in self.magi_oidc_groups.items()
            },
            MAGI_ENGINE_IN_PROCESS=self.engine_in_process,
            MAGI_DB_THREADS=self.db_threads,
        )
        return values


def read_provider(prefix: str) -> ProviderSettings:
    try:
        return ProviderSettings(_env_prefix=prefix)
    except ValidationError as exc:
        raise SettingRefused(f"Invalid environment: {describe(exc, prefix)}") from None


def describe(exc: ValidationError, prefix: str = "") -> str:
    """Each error as the variable's name, then the path inside its value as written (a
    model name in MAGI_MODEL_PRICES keeps its case), then the message."""

    def path(location: tuple) -> str:
        variable, *inside = (str(part) for part in location)
        return ".".join([prefix + variable.upper(), *inside])

    return "; ".join(f"{path(error['loc'])}: {error['msg']}" for error in exc.errors())


# Read by the test suite, not by MAGI.
NOT_SETTINGS = {"MAGI_SCREENSHOTS"}


def unknown_magi_variables(loaded: MagiSettings, environ: Mapping[str, str]) -> list[str]:
    """MAGI_* names that nothing reads: most likely typos, which must not pass unnoticed."""
    known = {name.upper() for name in MagiSettings.model_fields} | NOT_SETTINGS
    prefixes = ["MAGI_DEFAULT_"] + [f"MAGI_PROVIDER_{n.upper()}_" for n in loaded.magi_providers]
    known |= {
        prefix + name.upper() for prefix in prefixes for name in ProviderSettings.model_fields
    }
    return sorted(name for name in environ if name.startswith("MAGI_") and name not in known)


def sign_in_problem(loaded: MagiSettings) -> str | None:
    """What is missing or contradictory in the OpenID Connect settings, naming the
    variable; None when sign-in is off (no issuer and none of its settings) or complete."""
    if not loaded.magi_oidc_issuer:
        stray = [
            name
            for name in ("magi_oidc_client_id", "magi_oidc_break_glass_user", "magi_oidc_groups")
            if getattr(loaded, name)
        ]
        if stray:
            return f"{stray[0].upper()} is set but MAGI_OIDC_ISSUER is not"
        return None
    issuer = urlsplit(loaded.magi_oidc_issuer)
    local = issuer.hostname in {"localhost", "127.0.0.1", "::1"}
    if issuer.scheme != "https" and not (issuer.scheme == "http" and local):
        return "MAGI_OIDC_ISSUER must be an https:// URL (http only for localhost)"
    for name in ("magi_oidc_client_id", "magi_oidc_client_secret", "magi_oidc_groups"):
        if not getattr(loaded, name):
            return f"{name.upper()} is required with MAGI_OIDC_ISSUER"
    if "openid" not in loaded.magi_oidc_scopes:
        return "MAGI_OIDC_SCOPES must include openid"
    if loaded.magi_oidc_local_passwords and loaded.magi_oidc_break_glass_user:
        return (
            "MAGI_OIDC_BREAK_GLASS_USER contradicts MAGI_OIDC_LOCAL_PASSWORDS: with local "
            "passwords on, everyone may use theirs"
        )
    return None


def load_settings() -> MagiSettings:
    try:
        loaded = MagiSettings()
        loaded.providers()  # parse every provider block now, not on the first call
    except ValidationError as exc:
        raise SettingRefused(f"Invalid environment: {describe(exc)}") from None
    if problem := sign_in_problem(loaded):
        raise SettingRefused(f"Invalid environment: {problem}")
    if unknown := unknown_magi_variables(loaded, os.environ):
        raise SettingRefused(
            f"Unknown MAGI setting(s): {', '.join(unknown)}. See docs/settings.md."
        )
    return loaded


# --- The documentation, generated -----------------------------------------------------

DOCS_PATH = BASE_DIR / "docs" / "settings.md"

DOCS_INTRO = """# Settings

Every variable is read once at start-up into one typed object (`MagiSettings` in
`magi_site/environment.py`), which this page is generated from
(`.venv/bin/python -m magi_site.environment > docs/settings.md`; a test fails when it is
out of date). A value that does not parse (`DEBUG=maybe`, `MAGI_LLM_TIMEOUT=soon`) or a
`MAGI_*` name MAGI does not know (a typo such as `MAGI_LLM_TIMOUT`, or
`MAGI_PROVIDER_X_*` for a provider not named in `MAGI_PROVIDERS`) stops start-up with a
message naming the variable; every `manage.py` command then prints that one line and exits
2. An empty variable means its default.
"""

PROVIDERS_INTRO = """## One provider: `MAGI_DEFAULT_*` and `MAGI_PROVIDER_<NAME>_*`

The default provider is whatever the `openai` SDK reads (`OPENAI_BASE_URL`,
`OPENAI_API_KEY`); `MAGI_DEFAULT_*` overrides it. Each provider named in
`MAGI_PROVIDERS` is set by `MAGI_PROVIDER_<NAME>_*`. Unset values fall back to the global
LLM settings above.
"""


def shown_default(field: FieldInfo) -> str:
    # setting() makes every field: its extra is {"shown": a string}, or None.
    extra = cast(dict[str, str], field.json_schema_extra or {})
    if "shown" in extra:
        return extra["shown"]
    value = field.default
    if isinstance(value, bool):
        return "on" if value else "off"
    if value in ([], {}, "", None):
        return "—"
    if isinstance(value, list):
        return "`" + ",".join(value) + "`"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return f"`{value}`"


def table(fields: dict[str, FieldInfo], prefix: str = "") -> list[str]:
    rows = ["| variable | meaning | default |", "| --- | --- | --- |"]
    for name, field in fields.items():
        rows.append(f"| `{prefix}{name.upper()}` | {field.description} | {shown_default(field)} |")
    return rows


def markdown() -> str:
    """docs/settings.md: a table per section of MagiSettings, then a provider's."""
    source = Path(__file__).read_text()
    lines = [DOCS_INTRO]
    section: dict = {}
    title = ""
    for name, field in MagiSettings.model_fields.items():
        heading = section_of(source, name)
        if heading != title:
            if section:
                lines += [f"## {title}", "", *table(section), ""]
            title, section = heading, {}
        section[name] = field
    lines += [f"## {title}", "", *table(section), "", PROVIDERS_INTRO]
    lines += table(ProviderSettings.model_fields, "MAGI_PROVIDER_<NAME>_")
    return "\n".join(lines) + "\n"


def section_of(source: str, name: str) -> str:
    """The `# --- Title` comment above a field in this file's MagiSettings."""
    before = source[: source.index(f"    {name}: ")]
    return before[before.rindex("# --- ") + 6 :].split("\n", 1)[0].strip()


if __name__ == "__main__":
    print(markdown(), end="")
