"""MAGI settings. Everything an operator changes comes from the environment, read once
into one typed object (`MagiSettings`): a value that does not parse, or a `MAGI_*` name
that MAGI does not know, stops start-up with a message naming the variable.

The defaults run on one machine with no services: SQLite, the in-memory channel
layer and the engine inside the web process. DATABASE_URL and REDIS_URL switch to
PostgreSQL and channels-redis for several processes or machines.
"""

import json
import os
import secrets
from pathlib import Path
from typing import Annotated, Literal

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

BASE_DIR = Path(__file__).resolve().parent.parent

StructuredOutput = Literal["json_schema", "json_object", "prompt"]
# Comma-separated in the environment ("a,b"), not JSON.
CommaList = Annotated[list[str], NoDecode]
# name=value pairs separated by commas ("tiny=/models/tiny.gguf,big=/models/big.gguf").
PairMap = Annotated[dict[str, str], NoDecode]
FloatMap = Annotated[dict[str, float], NoDecode]


def split_list(value):
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def split_pairs(value):
    if not isinstance(value, str):
        return value
    mapping = {}
    for item in split_list(value):
        key, sep, rest = item.partition("=")
        if not sep or not key.strip() or not rest.strip():
            raise ValueError(f"entries look like name=value, not {item!r}")
        mapping[key.strip()] = rest.strip()
    return mapping


def parse_seed(value):
    """A seed is a whole number; "none" (or "off") sends none, for providers that refuse it."""
    if isinstance(value, str) and value.strip().lower() in {"none", "off"}:
        return None
    return value


def parse_json_object(value):
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


class ModelPrice(BaseModel):
    """A model's price in USD per million tokens. Cached prompt tokens cost `cached` when
    given, else the prompt price."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)
    cached: float | None = Field(default=None, ge=0)


class Env(BaseSettings):
    # Empty variables count as unset, so `FOO=` in a shell file means "the default".
    model_config = SettingsConfigDict(env_ignore_empty=True, extra="ignore", frozen=True)


class ProviderSettings(Env):
    """One OpenAI-compatible endpoint: MAGI_DEFAULT_* or MAGI_PROVIDER_<NAME>_*.

    Unset values fall back to MAGI's global LLM settings (see MagiSettings.providers).
    """

    base_url: str | None = None
    api_key: str | None = None
    models: CommaList = []
    structured_output: StructuredOutput = "json_schema"
    timeout: float | None = Field(default=None, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    seed: int | Literal["inherit"] | None = "inherit"
    # Calls in flight at once (a rate-limited API wants a bound); unset: no limit of ours.
    concurrency: int | None = Field(default=None, ge=1)
    # List the provider's models from its GET /v1/models (Ollama, vLLM, LM Studio, ...).
    discover: bool = False

    _split_models = field_validator("models", mode="before")(split_list)
    _parse_seed = field_validator("seed", mode="before")(parse_seed)


class MagiSettings(Env):
    """Every environment variable MAGI reads, with its type and default."""

    debug: bool = False
    secret_key: str = ""
    allowed_hosts: CommaList = ["localhost", "127.0.0.1", "[::1]"]
    csrf_trusted_origins: CommaList = []
    time_zone: str = "UTC"
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    static_root: Path | None = None
    database_url: str = ""
    redis_url: str = ""
    magi_var_dir: Path = BASE_DIR / "var"

    # --- LLM providers: the default one is whatever the openai SDK itself reads
    # (OPENAI_BASE_URL, OPENAI_API_KEY); more are named in MAGI_PROVIDERS.
    openai_api_key: str = ""
    magi_models: CommaList | None = None
    magi_providers: CommaList = []
    magi_llm_timeout: float = Field(default=60.0, gt=0)
    # "Retried up to 3 times": four attempts in all per (agent, round).
    magi_llm_max_attempts: int = Field(default=4, ge=1)
    magi_llm_retry_initial_wait: float = Field(default=1.0, ge=0)
    magi_llm_retry_max_wait: float = Field(default=20.0, ge=0)
    magi_llm_max_tokens: int = Field(default=400, ge=16)
    # Greedy decoding and a fixed seed: the same judgement gives the same votes twice.
    magi_llm_temperature: float = Field(default=0.0, ge=0, le=2)
    magi_llm_seed: int | None = 0
    magi_model_temperatures: FloatMap = {}
    # Discovering providers' model lists are refreshed in the background this often; the
    # first look (and "Refresh models") waits at most the timeout for an answer.
    magi_discovery_interval: float = Field(default=300.0, gt=0)
    magi_discovery_timeout: float = Field(default=3.0, gt=0)

    # --- Local GGUF models served by a llama.cpp server MAGI starts (name=/path/file.gguf).
    magi_local_models: PairMap = {}
    magi_local_server_start_timeout: float = Field(default=120.0, gt=0)
    # A small CPU model reads a long prompt slowly: local calls get a timeout of their own.
    magi_local_timeout: float = Field(default=120.0, gt=0)
    # SmolLM2 was trained on 8192 tokens; the longest content MAGI accepts plus the prompt
    # around it needs more than llama.cpp's default of 2048.
    magi_local_context_tokens: int = Field(default=8192, ge=512)
    # llama.cpp's own choice (all cores) when 0.
    magi_local_threads: int = Field(default=0, ge=0)
    # The prebuilt llama.cpp server, or llama-cpp-python's built from source for this CPU.
    magi_local_runtime: Literal["xllamacpp", "llama-cpp-python"] = "xllamacpp"
    # Calls one local server answers at once (parallel slots, continuous batching).
    magi_local_parallel: int = Field(default=3, ge=1)

    # --- Input bounds.
    magi_content_max_chars: int = Field(default=20_000, ge=1)
    # Cases one evaluation suite may hold (each run of it costs nine LLM calls a case).
    magi_suite_max_cases: int = Field(default=500, ge=1)
    # USD per million tokens, per model: an evaluation report's cost (judgements/metrics.py).
    magi_model_prices: Annotated[dict[str, ModelPrice], NoDecode] = {}
    # The largest request body (form post or API JSON) the server reads, in bytes.
    magi_max_body_bytes: int = Field(default=1_000_000, ge=10_000)

    # --- Abuse limits: each new judgement costs nine LLM calls. Counted in the database,
    # so they hold across web processes; 0 turns a limit off.
    magi_rate_window_seconds: int = Field(default=60, ge=1)
    magi_rate_limit_per_user: int = Field(default=20, ge=0)
    magi_rate_limit_per_token: int = Field(default=20, ge=0)
    magi_unfinished_per_user: int = Field(default=20, ge=0)
    # Evaluation runs a user may have under way at once (each can queue thousands of calls).
    magi_unfinished_runs_per_user: int = Field(default=2, ge=0)
    # How long an Idempotency-Key on POST /api/judgements/ is remembered.
    magi_idempotency_hours: float = Field(default=24.0, gt=0)

    # --- Contested verdicts (judgements/contested.py). Hold a contested verdict for a
    # person by default, for cases and saved panels that do not say.
    magi_hold_contested: bool = False

    # --- Webhooks (judgements/webhooks.py). Hosts a callback_url may name: exact host
    # names or `*.example.com` patterns; https only, unless an entry says `http://host`.
    # Empty (the default) refuses every callback_url.
    magi_webhook_hosts: CommaList = []
    magi_webhook_timeout: float = Field(default=10.0, gt=0)
    magi_webhook_max_attempts: int = Field(default=8, ge=1)
    # The wait before the second attempt, doubled after each failure up to the maximum.
    magi_webhook_retry_initial_wait: float = Field(default=10.0, ge=0)
    magi_webhook_retry_max_wait: float = Field(default=3600.0, ge=0)

    # --- Engine.
    # Without Redis there is one process, so the engine worker runs inside the web server.
    magi_engine_in_process: bool | None = None
    magi_lease_seconds: float = Field(default=30.0, gt=0)
    magi_sweep_interval: float = Field(default=10.0, gt=0)
    # How long the engine rides out an unreachable database before giving up on a call.
    magi_db_retry_seconds: float = Field(default=30.0, ge=0)
    # A judgement not finished this long after its first claim ends in error: one that
    # keeps losing its workers (or never gets an answer) cannot stay "judging" forever.
    magi_judgement_timeout: float = Field(default=1800.0, gt=0)
    # Judgements one worker process runs at once; more wait in the database.
    magi_worker_concurrency: int = Field(default=200, ge=1)
    # Threads (database connections) each process uses for the engine's queries; SQLite
    # has one writer at a time, so more threads there only wait on its lock.
    magi_db_threads: int | None = Field(default=None, ge=1)
    # Longest wait for the channel layer per event: the database holds the state, so a
    # slow or absent Redis must not hold up a judgement.
    magi_channel_send_timeout: float = Field(default=2.0, gt=0)
    # How often an open live page re-joins its group and resyncs, in case events were lost.
    magi_ws_resync_seconds: float = Field(default=15.0, gt=0)

    # --- HTTPS: served over HTTPS behind a TLS proxy that sets X-Forwarded-Proto.
    magi_https: bool = False
    # How long browsers remember to use HTTPS only (HSTS), once MAGI_HTTPS is on.
    magi_hsts_seconds: int = Field(default=31_536_000, ge=0)
    # Asks to be on browsers' built-in HTTPS list: only once the domain is submitted.
    magi_hsts_preload: bool = False

    _split_lists = field_validator(
        "allowed_hosts",
        "csrf_trusted_origins",
        "magi_models",
        "magi_providers",
        "magi_webhook_hosts",
        mode="before",
    )(split_list)
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
                models = models or split_list(default_models)
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
            }
        return providers


def read_provider(prefix: str) -> ProviderSettings:
    try:
        return ProviderSettings(_env_prefix=prefix)
    except ValidationError as exc:
        raise ImproperlyConfigured(f"Invalid environment: {describe(exc, prefix)}") from None


def describe(exc: ValidationError, prefix: str = "") -> str:
    """Each error as the variable's name, then the path inside its value as written (a
    model name in MAGI_MODEL_PRICES keeps its case), then the message."""

    def path(location: tuple) -> str:
        variable, *inside = (str(part) for part in location)
        return ".".join([prefix + variable.upper(), *inside])

    return "; ".join(f"{path(error['loc'])}: {error['msg']}" for error in exc.errors())


# Read by the test suite, not by MAGI.
NOT_SETTINGS = {"MAGI_SCREENSHOTS"}


def unknown_magi_variables(loaded: MagiSettings, environ) -> list[str]:
    """MAGI_* names that nothing reads: most likely typos, which must not pass unnoticed."""
    known = {name.upper() for name in MagiSettings.model_fields} | NOT_SETTINGS
    prefixes = ["MAGI_DEFAULT_"] + [f"MAGI_PROVIDER_{n.upper()}_" for n in loaded.magi_providers]
    known |= {
        prefix + name.upper() for prefix in prefixes for name in ProviderSettings.model_fields
    }
    return sorted(name for name in environ if name.startswith("MAGI_") and name not in known)


def load_settings() -> MagiSettings:
    try:
        loaded = MagiSettings()
        loaded.providers()  # parse every provider block now, not on the first call
    except ValidationError as exc:
        raise ImproperlyConfigured(f"Invalid environment: {describe(exc)}") from None
    if unknown := unknown_magi_variables(loaded, os.environ):
        raise ImproperlyConfigured(
            f"Unknown MAGI setting(s): {', '.join(unknown)}. See the README's settings tables."
        )
    return loaded


MAGI = load_settings()


DEBUG = MAGI.debug

SECRET_KEY = MAGI.secret_key
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY in the environment, or DEBUG=1 for a "
            "throwaway development key."
        )
    # A fresh key per start is fine for development: it only logs people out.
    SECRET_KEY = "dev-" + secrets.token_urlsafe(40)

ALLOWED_HOSTS = MAGI.allowed_hosts
CSRF_TRUSTED_ORIGINS = MAGI.csrf_trusted_origins

# Served over HTTPS behind a TLS proxy (MAGI_HTTPS=1): the proxy says the request came over
# HTTPS in X-Forwarded-Proto (and must overwrite whatever a client sent in it).
if MAGI.magi_https:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    # A load balancer's plain-HTTP health check must not be redirected.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = MAGI.magi_hsts_seconds
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = MAGI.magi_hsts_preload
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # Preloading is the operator's choice (MAGI_HSTS_PRELOAD), not a missing setting.
    SILENCED_SYSTEM_CHECKS = ["security.W021"]

INSTALLED_APPS = [
    "daphne",
    "judgements",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
]

MIDDLEWARE = [
    "judgements.security.content_security_policy_middleware",
    # The API skips the page middlewares below (judgements/fast_lane.py).
    "judgements.fast_lane.api_fast_lane",
    "django.middleware.security.SecurityMiddleware",
    "judgements.security.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "magi_site.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = None
ASGI_APPLICATION = "magi_site.asgi.application"

# Where the embedded default keeps its state: the SQLite database, static files, keys.
VAR_DIR = MAGI.magi_var_dir
VAR_DIR.mkdir(parents=True, exist_ok=True)

if MAGI.database_url:
    # Connections are kept per thread (the API's pool threads open one per call
    # otherwise), checked before reuse so a restarted server costs one reconnect.
    DATABASES = {
        "default": dj_database_url.parse(
            MAGI.database_url, conn_max_age=60, conn_health_checks=True
        )
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "db.sqlite3",
            "OPTIONS": {
                # WAL lets the page read while the engine writes; IMMEDIATE makes
                # writers queue on the lock instead of failing with "database is locked".
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
            },
            # A file, not shared memory: the engine's threads must see committed rows.
            # Per process, so two test runs on one machine do not share a file.
            "TEST": {"NAME": str(VAR_DIR / f"test-db-{os.getpid()}.sqlite3")},
            # Kept open for the thread's life: opening one (with Django's SQL functions
            # registered on it) was most of the CPU a refused API request cost in a burst.
            "CONN_MAX_AGE": None,
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = MAGI.redis_url
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "capacity": 1000, "expiry": 60},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "judgement-new"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = MAGI.time_zone
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = MAGI.static_root or VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
# WhiteNoise serves static files with DEBUG off too; finders spare the embedded default a
# collectstatic step.
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = DEBUG

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {
        # Not propagated: daphne configures the root logger too, and every line would
        # show twice.
        "judgements": {"handlers": ["console"], "level": MAGI.log_level, "propagate": False}
    },
}

# --- MAGI's own settings, as django.conf.settings.MAGI_* (tests override them there) ---
MAGI_PROVIDERS = MAGI.providers()
MAGI_MODEL_TEMPERATURES = MAGI.magi_model_temperatures
MAGI_DISCOVERY_INTERVAL = MAGI.magi_discovery_interval
MAGI_DISCOVERY_TIMEOUT = MAGI.magi_discovery_timeout
MAGI_LOCAL_MODELS = MAGI.magi_local_models
MAGI_LOCAL_SERVER_START_TIMEOUT = MAGI.magi_local_server_start_timeout
MAGI_LOCAL_TIMEOUT = MAGI.magi_local_timeout
MAGI_LOCAL_CONTEXT_TOKENS = MAGI.magi_local_context_tokens
MAGI_LOCAL_THREADS = MAGI.magi_local_threads
MAGI_LOCAL_RUNTIME = MAGI.magi_local_runtime
MAGI_LOCAL_PARALLEL = MAGI.magi_local_parallel
MAGI_LLM_TEMPERATURE = MAGI.magi_llm_temperature
MAGI_LLM_SEED = MAGI.magi_llm_seed
MAGI_LLM_MAX_ATTEMPTS = MAGI.magi_llm_max_attempts
MAGI_LLM_RETRY_INITIAL_WAIT = MAGI.magi_llm_retry_initial_wait
MAGI_LLM_RETRY_MAX_WAIT = MAGI.magi_llm_retry_max_wait
MAGI_LLM_MAX_TOKENS = MAGI.magi_llm_max_tokens
MAGI_WS_RESYNC_SECONDS = MAGI.magi_ws_resync_seconds
MAGI_CONTENT_MAX_CHARS = MAGI.magi_content_max_chars
MAGI_SUITE_MAX_CASES = MAGI.magi_suite_max_cases
MAGI_MODEL_PRICES = {model: price.model_dump() for model, price in MAGI.magi_model_prices.items()}
DATA_UPLOAD_MAX_MEMORY_SIZE = MAGI.magi_max_body_bytes
MAGI_RATE_WINDOW_SECONDS = MAGI.magi_rate_window_seconds
MAGI_RATE_LIMIT_PER_USER = MAGI.magi_rate_limit_per_user
MAGI_RATE_LIMIT_PER_TOKEN = MAGI.magi_rate_limit_per_token
MAGI_UNFINISHED_PER_USER = MAGI.magi_unfinished_per_user
MAGI_UNFINISHED_RUNS_PER_USER = MAGI.magi_unfinished_runs_per_user
MAGI_IDEMPOTENCY_HOURS = MAGI.magi_idempotency_hours
MAGI_HOLD_CONTESTED = MAGI.magi_hold_contested
MAGI_WEBHOOK_HOSTS = MAGI.magi_webhook_hosts
MAGI_WEBHOOK_TIMEOUT = MAGI.magi_webhook_timeout
MAGI_WEBHOOK_MAX_ATTEMPTS = MAGI.magi_webhook_max_attempts
MAGI_WEBHOOK_RETRY_INITIAL_WAIT = MAGI.magi_webhook_retry_initial_wait
MAGI_WEBHOOK_RETRY_MAX_WAIT = MAGI.magi_webhook_retry_max_wait
MAGI_ENGINE_IN_PROCESS = MAGI.engine_in_process
MAGI_ENGINE_CHANNEL = "magi-engine"
MAGI_LEASE_SECONDS = MAGI.magi_lease_seconds
MAGI_SWEEP_INTERVAL = MAGI.magi_sweep_interval
MAGI_DB_RETRY_SECONDS = MAGI.magi_db_retry_seconds
MAGI_JUDGEMENT_TIMEOUT = MAGI.magi_judgement_timeout
MAGI_WORKER_CONCURRENCY = MAGI.magi_worker_concurrency
MAGI_DB_THREADS = MAGI.db_threads
MAGI_CHANNEL_SEND_TIMEOUT = MAGI.magi_channel_send_timeout
