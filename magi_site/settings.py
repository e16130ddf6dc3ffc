"""Django's settings, read from MAGI's typed settings (magi_site/environment.py): the one
place an environment variable is read and described."""

import os
import secrets
from pathlib import Path

import dj_database_url
import django_stubs_ext

from magi_site.channel_layers import channel_layers
from magi_site.environment import BASE_DIR, SettingRefused, load_settings

# A checkout keeps templates/ and static/ beside magi_site/; an installed wheel keeps them
# inside it (pyproject.toml).
SITE_FILES = BASE_DIR if (BASE_DIR / "templates").is_dir() else Path(__file__).resolve().parent

MAGI = load_settings()

# ModelAdmin[Panel], ModelForm[Budget] and the like name their model at run time as the
# type checker reads them.
django_stubs_ext.monkeypatch()


DEBUG = MAGI.debug

# Where the embedded default keeps its state: the SQLite database, static files, keys.
VAR_DIR = MAGI.magi_var_dir
VAR_DIR.mkdir(parents=True, exist_ok=True)

# `make run` keeps this installation's key in var/secret-key: every manage.py command run
# by hand on the same checkout finds it there, with no SECRET_KEY to export.
KEPT_SECRET_KEY = VAR_DIR / "secret-key"
SECRET_KEY = MAGI.secret_key
if not SECRET_KEY and KEPT_SECRET_KEY.is_file():
    SECRET_KEY = KEPT_SECRET_KEY.read_text().strip()
if not SECRET_KEY:
    if not DEBUG:
        raise SettingRefused(
            "SECRET_KEY is not set. Run `make run` once (it keeps a key in var/secret-key), "
            "set SECRET_KEY in the environment, or DEBUG=1 for a throwaway development key."
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
    # The API's framework; listed for its interactive docs' files (served from here).
    "ninja",
]

MIDDLEWARE = [
    "judgements.web.security.content_security_policy_middleware",
    # The API skips the page middlewares below (judgements/web/fast_lane.py).
    "judgements.web.fast_lane.api_fast_lane",
    "django.middleware.security.SecurityMiddleware",
    "judgements.web.security.StaticFilesMiddleware",
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
        "DIRS": [SITE_FILES / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "judgements.web.navigation.navigation",
            ],
        },
    },
]

WSGI_APPLICATION = None
ASGI_APPLICATION = "magi_site.asgi.application"

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
            "NAME": str(VAR_DIR / "db.sqlite3"),
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
CHANNEL_LAYERS = channel_layers(REDIS_URL)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Passwords are checked by MAGI's backend, which refuses them when OpenID Connect sign-in
# is configured, but for the break-glass user (judgements/identity/passwords.py); without
# OIDC it is Django's ModelBackend unchanged.
AUTHENTICATION_BACKENDS = ["judgements.identity.passwords.PasswordBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "judgement-new"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = MAGI.time_zone
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [SITE_FILES / "static"]
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
# The app reads them typed through judgements/models/magi_settings.py, which looks each up
# here at the moment of the read; tests/judgements/models/test_magi_settings.py holds the
# names and types it declares to these values.
globals().update(MAGI.django_settings())

# Reviewers' notifications (judgements/outcome/notifications.py); no SMTP server, no email.
EMAIL_HOST = MAGI.email_host
EMAIL_PORT = MAGI.email_port
EMAIL_HOST_USER = MAGI.email_host_user
EMAIL_HOST_PASSWORD = MAGI.email_host_password
EMAIL_USE_TLS = MAGI.email_use_tls
DEFAULT_FROM_EMAIL = MAGI.default_from_email
EMAIL_TIMEOUT = 10
DATA_UPLOAD_MAX_MEMORY_SIZE = MAGI.magi_max_body_bytes
MAGI_ENGINE_CHANNEL = "magi-engine"
