"""MAGI settings. Everything an operator changes comes from the environment.

The defaults run on one machine with no services: SQLite, the in-memory channel
layer and the engine inside the web process. DATABASE_URL and REDIS_URL switch to
PostgreSQL and channels-redis for several processes or machines.
"""

import os
import secrets
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    try:
        return int(value) if value.strip() else default
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number, not {value!r}") from exc


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name, "")
    try:
        return float(value) if value.strip() else default
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, not {value!r}") from exc


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_mapping(name: str) -> dict[str, str]:
    """Parse NAME=value pairs separated by commas, e.g. "tiny=/models/tiny.gguf"."""
    mapping = {}
    for item in env_list(name):
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise ImproperlyConfigured(f"{name} entries look like name=value, not {item!r}")
        mapping[key.strip()] = value.strip()
    return mapping


DEBUG = env_bool("DEBUG")

SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY in the environment, or DEBUG=1 for a "
            "throwaway development key."
        )
    # A fresh key per start is fine for development: it only logs people out.
    SECRET_KEY = "dev-" + secrets.token_urlsafe(40)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

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
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
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
VAR_DIR = Path(env_str("MAGI_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0)}
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
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL")
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
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(VAR_DIR / "static")))
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
        "judgements": {
            "handlers": ["console"],
            "level": env_str("LOG_LEVEL", "INFO"),
            "propagate": False,
        }
    },
}

# --- LLM providers -----------------------------------------------------------------
# The default provider is whatever the openai SDK itself reads: OPENAI_BASE_URL and
# OPENAI_API_KEY. Further OpenAI-compatible endpoints are named in MAGI_PROVIDERS and
# configured with MAGI_PROVIDER_<NAME>_* variables, so each agent's model can live on a
# different server.
STRUCTURED_OUTPUT_MODES = ("json_schema", "json_object", "prompt")


def provider_from_env(prefix: str, *, base_url: str | None, api_key: str | None, models: str):
    mode = env_str(f"{prefix}STRUCTURED_OUTPUT", "json_schema")
    if mode not in STRUCTURED_OUTPUT_MODES:
        raise ImproperlyConfigured(
            f"{prefix}STRUCTURED_OUTPUT must be one of {', '.join(STRUCTURED_OUTPUT_MODES)}"
        )
    return {
        "base_url": env_str(f"{prefix}BASE_URL") or base_url,
        "api_key": env_str(f"{prefix}API_KEY") or api_key,
        "structured_output": mode,
        "models": env_list(f"{prefix}MODELS", models),
        "timeout": env_float(f"{prefix}TIMEOUT", env_float("MAGI_LLM_TIMEOUT", 60.0)),
    }


MAGI_PROVIDERS = {
    # None lets the SDK read OPENAI_BASE_URL / OPENAI_API_KEY itself.
    "default": provider_from_env(
        "MAGI_DEFAULT_",
        base_url=None,
        api_key=None,
        models=env_str("MAGI_MODELS", "gpt-4o-mini" if env_str("OPENAI_API_KEY") else ""),
    )
}
for _name in env_list("MAGI_PROVIDERS"):
    MAGI_PROVIDERS[_name.lower()] = provider_from_env(
        f"MAGI_PROVIDER_{_name.upper()}_", base_url=None, api_key=None, models=""
    )

# Local GGUF models served by a bundled llama.cpp server (name=/path/to/file.gguf).
MAGI_LOCAL_MODELS = env_mapping("MAGI_LOCAL_MODELS")
MAGI_LOCAL_SERVER_START_TIMEOUT = env_float("MAGI_LOCAL_SERVER_START_TIMEOUT", 120.0)
# A small CPU model reads a long prompt slowly: local calls get a timeout of their own.
MAGI_LOCAL_TIMEOUT = env_float("MAGI_LOCAL_TIMEOUT", 120.0)
# Enough context for the longest content MAGI accepts plus the prompt around it.
MAGI_LOCAL_CONTEXT_TOKENS = env_int("MAGI_LOCAL_CONTEXT_TOKENS", 8192)
# llama.cpp's own choice (all cores) unless set.
MAGI_LOCAL_THREADS = env_int("MAGI_LOCAL_THREADS", 0) or None

# "Retried up to 3 times": four attempts in all per (agent, round).
MAGI_LLM_MAX_ATTEMPTS = env_int("MAGI_LLM_MAX_ATTEMPTS", 4)
MAGI_LLM_RETRY_INITIAL_WAIT = env_float("MAGI_LLM_RETRY_INITIAL_WAIT", 1.0)
MAGI_LLM_RETRY_MAX_WAIT = env_float("MAGI_LLM_RETRY_MAX_WAIT", 20.0)
MAGI_LLM_MAX_TOKENS = env_int("MAGI_LLM_MAX_TOKENS", 400)

# How often an open live page re-joins its group and resyncs, in case events were lost.
MAGI_WS_RESYNC_SECONDS = env_float("MAGI_WS_RESYNC_SECONDS", 15.0)

# --- Input bounds ----------------------------------------------------------------------
MAGI_CONTENT_MAX_CHARS = env_int("MAGI_CONTENT_MAX_CHARS", 20_000)

# --- Engine ------------------------------------------------------------------------------
# Without Redis there is one process, so the engine worker runs inside the web server.
MAGI_ENGINE_IN_PROCESS = env_bool("MAGI_ENGINE_IN_PROCESS", default=not REDIS_URL)
MAGI_ENGINE_CHANNEL = "magi-engine"
MAGI_LEASE_SECONDS = env_float("MAGI_LEASE_SECONDS", 30.0)
MAGI_SWEEP_INTERVAL = env_float("MAGI_SWEEP_INTERVAL", 10.0)
# How long the engine rides out an unreachable database before giving up on a call.
MAGI_DB_RETRY_SECONDS = env_float("MAGI_DB_RETRY_SECONDS", 30.0)
# A judgement not finished this long after its first claim ends in error: a judgement
# that keeps losing its workers (or never gets an answer) cannot stay "judging" forever.
MAGI_JUDGEMENT_TIMEOUT = env_float("MAGI_JUDGEMENT_TIMEOUT", 1800.0)
# Judgements one worker process runs at once; more wait in the database for a free worker.
MAGI_WORKER_CONCURRENCY = env_int("MAGI_WORKER_CONCURRENCY", 200)
# Threads (and so database connections) each process uses for the engine's queries. SQLite
# has one writer at a time: more threads there only wait on its lock.
MAGI_DB_THREADS = env_int("MAGI_DB_THREADS", 8 if DATABASE_URL else 1)
# Longest wait for the channel layer when publishing an event or waking a worker: the
# database holds the state, so a slow or absent Redis must not hold up a judgement.
MAGI_CHANNEL_SEND_TIMEOUT = env_float("MAGI_CHANNEL_SEND_TIMEOUT", 2.0)
