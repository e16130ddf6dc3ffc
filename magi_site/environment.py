"""MAGI's settings, written once: every environment variable MAGI reads, typed, with
its default and meaning (`MagiSettings`). A value that does not parse, or a `MAGI_*` name
MAGI does not know, stops start-up with a message naming the variable. Django's settings
(magi_site/settings.py) are read from it, and so is docs/settings.md.

Its fields live in one class per area, each under its `# --- Title` heading, which heads
its table on the generated page: site_settings.py, model_settings.py and
judging_settings.py. A new setting goes under the heading of its area there.

The defaults run on one machine with no services: SQLite, the in-memory channel
layer and the engine inside the web process. DATABASE_URL and REDIS_URL switch to
PostgreSQL and channels-redis for several processes or machines.
"""

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

from pydantic import ValidationError, field_validator

from magi_site.judging_settings import (
    AuditSettings,
    EngineSettings,
    LimitSettings,
    VerdictSettings,
)
from magi_site.model_settings import (
    LocalModelSettings,
    ModelSettings,
    ProviderConfig,
    ProviderSettings,
    read_provider,
)
from magi_site.settings_kit import (
    BASE_DIR,
    SettingRefused,
    check_database_url,
    describe,
    items_of,
    parse_group_map,
    parse_json_object,
    parse_seed,
    split_list,
    split_pairs,
)
from magi_site.site_settings import (
    NotificationSettings,
    OperationSettings,
    SignInSettings,
    SiteSettings,
)

__all__ = ["BASE_DIR", "MagiSettings", "SettingRefused", "load_settings"]


# The areas in reverse: pydantic lists a model's fields from its last base to its first,
# so the page (and `model_fields`) keep the order Site, Models, ..., Engine.
class MagiSettings(
    EngineSettings,
    SignInSettings,
    OperationSettings,
    NotificationSettings,
    AuditSettings,
    VerdictSettings,
    LimitSettings,
    LocalModelSettings,
    ModelSettings,
    SiteSettings,
):
    """Every environment variable MAGI reads, with its type, default and meaning: the one
    description of MAGI's settings. magi_site/settings.py turns it into Django's settings,
    and `python -m magi_site.settings_docs` writes docs/settings.md from it."""

    _split_lists = field_validator(
        "allowed_hosts",
        "csrf_trusted_origins",
        "magi_models",
        "magi_providers",
        "magi_webhook_hosts",
        "magi_oidc_scopes",
        "magi_audit_retired_keys",
        "magi_audit_checkpoint_webhooks",
        "magi_local_fixed_json",
        mode="before",
    )(split_list)
    _parse_groups = field_validator("magi_oidc_groups", mode="before")(parse_group_map)
    _split_pairs = field_validator("magi_local_models", "magi_model_temperatures", mode="before")(
        split_pairs
    )
    _parse_seed = field_validator("magi_llm_seed", mode="before")(parse_seed)
    _parse_prices = field_validator("magi_model_prices", mode="before")(parse_json_object)
    _check_database = field_validator("database_url", mode="before")(check_database_url)

    @property
    def engine_in_process(self) -> bool:
        if self.magi_engine_in_process is None:
            return not self.redis_url
        return self.magi_engine_in_process

    @property
    def db_threads(self) -> int:
        return self.magi_db_threads or (8 if self.database_url else 1)

    def providers(self) -> dict[str, ProviderConfig]:
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
            providers[name] = ProviderConfig(
                # None lets the SDK read OPENAI_BASE_URL / OPENAI_API_KEY itself.
                base_url=provider.base_url,
                api_key=provider.api_key,
                structured_output=provider.structured_output,
                models=models,
                timeout=provider.timeout or self.magi_llm_timeout,
                temperature=(
                    self.magi_llm_temperature
                    if provider.temperature is None
                    else provider.temperature
                ),
                seed=self.magi_llm_seed if provider.seed == "inherit" else provider.seed,
                concurrency=provider.concurrency,
                discover=provider.discover,
                logprobs=provider.logprobs,
            )
        return providers

    def django_settings(self) -> dict[str, object]:
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
