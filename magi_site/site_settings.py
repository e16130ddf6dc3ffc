"""The settings of the site around the judgements: Django's own, notifications,
operations, and sign-in with OpenID Connect."""

from pathlib import Path
from typing import Literal

from magi_site.settings_kit import BASE_DIR, CommaList, Env, GroupMap, setting


class SiteSettings(Env):
    """Site."""

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
        "",
        "PostgreSQL (`postgres://user:pass@host/db`), no other database; SQLite in "
        "`MAGI_VAR_DIR` when unset",
        shown="—",
    )
    redis_url: str = setting("", "channels-redis layer; the in-memory layer when unset", shown="—")
    magi_var_dir: Path = setting(
        BASE_DIR / "var",
        "where SQLite, static files, the secret key, the admin password and the local "
        "models' saved slot states live",
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


class NotificationSettings(Env):
    """Notifications."""

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


class OperationSettings(Env):
    """Operations."""

    # --- Operations
    magi_metrics_token: str = setting(
        "",
        "the bearer token Prometheus sends to scrape `/metrics`; unset, `/metrics` answers "
        "404 (metrics are not open to the world by default)",
        shown="— (off)",
    )


class SignInSettings(Env):
    """Sign-in with OpenID Connect."""

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
