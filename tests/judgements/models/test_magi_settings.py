"""The app's typed view of MAGI's settings declares every MAGI_* setting Django holds, each
with its `MagiSettings` field's type, holds values of those types at start-up, and reads
the override in force."""

import collections.abc
import functools
import operator
import os
import types
import typing
from typing import Annotated, Literal, get_args, get_origin, get_type_hints, is_typeddict

import pytest
from django.test import override_settings

from judgements.core.settings_read import MagiSettingsRead
from judgements.models.magi_settings import magi_settings
from magi_site import settings as site_settings
from magi_site.environment import MagiSettings, load_settings

DECLARED = get_type_hints(MagiSettingsRead)

# Django's value is computed at start-up from the field (MagiSettings.django_settings), so
# its type is the computed one's; the value test below holds it.
COMPUTED = {
    "MAGI_PROVIDERS",
    "MAGI_MODEL_PRICES",
    "MAGI_OIDC_GROUPS",
    "MAGI_ENGINE_IN_PROCESS",
    "MAGI_DB_THREADS",
}

# Every structured setting set, so each computed value has something in it to check.
ENVIRONMENT = {
    "OPENAI_API_KEY": "sk-test",
    "MAGI_PROVIDERS": "vllm",
    "MAGI_PROVIDER_VLLM_MODELS": "qwen",
    "MAGI_PROVIDER_VLLM_SEED": "none",
    "MAGI_MODEL_PRICES": '{"qwen": {"prompt": 0.1, "completion": 0.2, "cached": 0.05},'
    ' "gpt-4o-mini": {"prompt": 0.15, "completion": 0.6}}',
    "MAGI_MODEL_TEMPERATURES": "qwen=0.7",
    "MAGI_LOCAL_MODELS": "tiny=/models/tiny.gguf",
    "MAGI_OIDC_ISSUER": "https://idp.example.com/realms/acme",
    "MAGI_OIDC_CLIENT_ID": "magi",
    "MAGI_OIDC_CLIENT_SECRET": "s3cret",
    "MAGI_OIDC_GROUPS": "magi-fraud=Fraud:member,magi-admins=staff",
    "MAGI_WEBHOOK_HOSTS": "hooks.example.com",
}


def without_annotations(hint: object) -> object:
    """The type with pydantic's markers (NoDecode) taken off, as the app reads the value."""
    if get_origin(hint) is Annotated:
        return without_annotations(get_args(hint)[0])
    if get_origin(hint) in (typing.Union, types.UnionType):
        members = tuple(without_annotations(member) for member in get_args(hint))
        return functools.reduce(operator.or_, members)
    return hint


def conforms(value: object, hint: object) -> bool:
    """Whether the value is of the declared type, all the way in (pydantic cannot check a
    typing.TypedDict before Python 3.12)."""
    origin, args = get_origin(hint), get_args(hint)
    if hint is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, member) for member in args)
    if origin is Literal:
        return value in args
    if origin is list:
        return isinstance(value, list) and all(conforms(item, args[0]) for item in value)
    if origin is dict:
        return isinstance(value, dict) and all(
            conforms(key, args[0]) and conforms(item, args[1]) for key, item in value.items()
        )
    if origin is collections.abc.Callable:
        return callable(value)
    if is_typeddict(hint):
        fields = get_type_hints(hint)
        required: frozenset[str] = vars(hint)["__required_keys__"]
        return (
            isinstance(value, dict)
            and required <= value.keys() <= fields.keys()
            and all(conforms(item, fields[key]) for key, item in value.items())
        )
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(hint, type) and isinstance(value, hint)


def test_it_declares_every_magi_setting_django_holds():
    held = {name for name in vars(site_settings) if name.startswith("MAGI_")}
    assert set(DECLARED) == held


@pytest.mark.parametrize(
    "name",
    sorted(
        name
        for name in MagiSettings.model_fields
        if name.startswith("magi_") and name.upper() not in COMPUTED
    ),
)
def test_each_setting_is_declared_with_its_fields_type(name):
    field = MagiSettings.model_fields[name]
    assert DECLARED[name.upper()] == without_annotations(field.annotation)


def test_each_value_at_start_up_has_its_declared_type(monkeypatch):
    for variable in list(os.environ):
        if variable.startswith(("MAGI_", "OPENAI_")) or variable == "REDIS_URL":
            monkeypatch.delenv(variable)
    for variable, value in ENVIRONMENT.items():
        monkeypatch.setenv(variable, value)
    values = {**load_settings().django_settings(), "MAGI_ENGINE_CHANNEL": "magi-engine"}
    wrong = {
        name: values[name] for name, hint in DECLARED.items() if not conforms(values[name], hint)
    }
    assert wrong == {}


def test_a_read_sees_the_override_in_force(settings):
    settings.MAGI_LEASE_SECONDS = 7.5
    assert magi_settings.MAGI_LEASE_SECONDS == 7.5
    with override_settings(MAGI_LEASE_SECONDS=0.5):
        assert magi_settings.MAGI_LEASE_SECONDS == 0.5
    assert magi_settings.MAGI_LEASE_SECONDS == 7.5
