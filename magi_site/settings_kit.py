"""What MAGI's settings are made of: the types a variable's text parses into, the
before-validators that parse it, `setting` (a default, its meaning, how the generated page
shows it), the base every group of settings shares (`Env`), and the refusal
(`SettingRefused`). The settings themselves are magi_site/environment.py's `MagiSettings`,
gathered from one class per area (magi_site/*_settings.py)."""

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from django.core.exceptions import ImproperlyConfigured
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.config import JsonDict
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


# The schemes dj_database_url reads as PostgreSQL. Only PostgreSQL is configured by URL:
# SQLite is the embedded default, whose settings (WAL, writers queued on the lock, one
# database thread) a sqlite:// URL would go without.
POSTGRES_SCHEMES = ("postgres://", "postgresql://")


def check_database_url(value: Any) -> Any:
    """A PostgreSQL URL, or empty for the embedded SQLite; a ValueError otherwise, which
    names the scheme only (the rest of a URL may hold a password)."""
    if isinstance(value, str) and value and not value.startswith(POSTGRES_SCHEMES):
        scheme, found, _ = value.partition("://")
        given = repr(scheme) if found else "a value without a scheme"
        raise ValueError(
            f"PostgreSQL only (postgres://user:pass@host/db), not {given}; "
            "leave it unset for SQLite in MAGI_VAR_DIR"
        )
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


def describe(exc: ValidationError, prefix: str = "") -> str:
    """Each error as the variable's name, then the path inside its value as written (a
    model name in MAGI_MODEL_PRICES keeps its case), then the message."""

    def path(location: tuple[int | str, ...]) -> str:
        variable, *inside = (str(part) for part in location)
        return ".".join([prefix + variable.upper(), *inside])

    return "; ".join(f"{path(error['loc'])}: {error['msg']}" for error in exc.errors())
