"""The environment is read into one typed object; what does not parse, or is not a
setting at all, stops start-up naming the variable."""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from magi_site import environment, settings_docs
from magi_site.environment import load_settings
from tests.support.commands import deployment_environment

# A complete OpenID Connect configuration, which each case below breaks one way.
SIGN_IN = {
    "MAGI_OIDC_ISSUER": "https://idp.example.com/realms/acme",
    "MAGI_OIDC_CLIENT_ID": "magi",
    "MAGI_OIDC_CLIENT_SECRET": "s3cret",
    "MAGI_OIDC_GROUPS": "magi-fraud=Fraud:member,magi-admins=staff",
}


@pytest.fixture
def environ(monkeypatch):
    for name in list(os.environ):
        if name.startswith(("MAGI_", "OPENAI_")) or name in {"DEBUG", "REDIS_URL"}:
            monkeypatch.delenv(name)

    def setenv(**values):
        for name, value in values.items():
            monkeypatch.setenv(name, value)

    return setenv


def test_the_defaults_run_one_machine_with_no_services(environ):
    loaded = load_settings()
    assert loaded.engine_in_process and loaded.db_threads == 1
    assert loaded.providers()["default"] == {
        "base_url": None,
        "api_key": None,
        "structured_output": "json_schema",
        "models": [],
        "timeout": 60.0,
        "temperature": 0.0,
        "seed": 0,
        "concurrency": None,
        "discover": False,
        "logprobs": True,
    }


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"DEBUG": "maybe"}, "DEBUG: Input should be a valid boolean"),
        ({"MAGI_LLM_TIMEOUT": "soon"}, "MAGI_LLM_TIMEOUT: Input should be a valid number"),
        ({"MAGI_LEASE_SECONDS": "0"}, "MAGI_LEASE_SECONDS: Input should be greater than 0"),
        ({"MAGI_LOCAL_MODELS": "tiny"}, "MAGI_LOCAL_MODELS: Value error, entries look like"),
        ({"MAGI_DEFAULT_STRUCTURED_OUTPUT": "xml"}, "MAGI_DEFAULT_STRUCTURED_OUTPUT: Input"),
        ({"MAGI_LLM_TIMOUT": "3"}, "Unknown MAGI setting(s): MAGI_LLM_TIMOUT"),
        ({"DATABASE_URL": "sqlite:////srv/magi.db"}, "DATABASE_URL: Value error, PostgreSQL only"),
        ({"DATABASE_URL": "mysql://magi@db/magi"}, "not 'mysql'"),
        ({"DATABASE_URL": "magi:s3cret@db/magi"}, "not a value without a scheme;"),
        ({"MAGI_PROVIDER_VLLM_BASE_URL": "http://gpu/v1"}, "MAGI_PROVIDER_VLLM_BASE_URL"),
        ({**SIGN_IN, "MAGI_OIDC_CLIENT_ID": ""}, "MAGI_OIDC_CLIENT_ID is required"),
        ({**SIGN_IN, "MAGI_OIDC_GROUPS": ""}, "MAGI_OIDC_GROUPS is required"),
        ({**SIGN_IN, "MAGI_OIDC_GROUPS": "g=Team:admin"}, "MAGI_OIDC_GROUPS: Value error, g:"),
        ({**SIGN_IN, "MAGI_OIDC_GROUPS": "g=member"}, "a member needs a team"),
        ({**SIGN_IN, "MAGI_OIDC_SCOPES": "email"}, "MAGI_OIDC_SCOPES must include openid"),
        ({**SIGN_IN, "MAGI_OIDC_ISSUER": "http://idp.example.com"}, "MAGI_OIDC_ISSUER must be"),
        (
            {**SIGN_IN, "MAGI_OIDC_LOCAL_PASSWORDS": "true", "MAGI_OIDC_BREAK_GLASS_USER": "root"},
            "MAGI_OIDC_BREAK_GLASS_USER contradicts MAGI_OIDC_LOCAL_PASSWORDS",
        ),
        ({"MAGI_OIDC_CLIENT_ID": "magi"}, "MAGI_OIDC_CLIENT_ID is set but MAGI_OIDC_ISSUER"),
    ],
)
def test_it_refuses_what_it_cannot_read(environ, variables, message):
    environ(**variables)
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings()
    assert message in str(refused.value)


@pytest.mark.parametrize("url", ["mysql://magi:s3cret@db/magi", "magi:s3cret@db/magi"])
def test_a_refused_database_url_is_not_shown_with_its_password(environ, url):
    environ(DATABASE_URL=url)
    with pytest.raises(ImproperlyConfigured) as refused:
        load_settings()
    assert "DATABASE_URL" in str(refused.value) and "s3cret" not in str(refused.value)


def test_a_complete_sign_in_configuration_is_read_with_its_group_mapping(environ):
    environ(**{**SIGN_IN, "MAGI_OIDC_GROUPS": "/acme/fraud=Fraud Team:reviewer, magi-admins=staff"})
    groups = load_settings().django_settings()["MAGI_OIDC_GROUPS"]
    assert groups == {
        "/acme/fraud": {"team": "Fraud Team", "role": "reviewer"},
        "magi-admins": {"team": None, "role": "staff"},
    }


def test_providers_inherit_the_global_llm_settings_unless_they_set_their_own(environ):
    environ(
        OPENAI_API_KEY="sk-test",
        MAGI_LLM_TIMEOUT="30",
        MAGI_LLM_TEMPERATURE="0.2",
        MAGI_LLM_SEED="7",
        MAGI_PROVIDERS="vllm",
        MAGI_PROVIDER_VLLM_MODELS="qwen, llama",
        MAGI_PROVIDER_VLLM_TIMEOUT="90",
        MAGI_PROVIDER_VLLM_TEMPERATURE="0",
        MAGI_PROVIDER_VLLM_SEED="none",
    )
    providers = load_settings().providers()
    assert providers["default"]["models"] == ["gpt-4o-mini"]
    assert (providers["default"]["timeout"], providers["default"]["temperature"]) == (30.0, 0.2)
    assert providers["default"]["seed"] == 7
    assert providers["vllm"]["models"] == ["qwen", "llama"]
    assert (providers["vllm"]["timeout"], providers["vllm"]["temperature"]) == (90.0, 0.0)
    assert providers["vllm"]["seed"] is None


def test_an_empty_variable_means_the_default(environ):
    environ(DEBUG="", MAGI_LLM_TIMEOUT="", MAGI_ENGINE_IN_PROCESS="")
    loaded = load_settings()
    assert (loaded.debug, loaded.magi_llm_timeout, loaded.engine_in_process) == (False, 60.0, True)


def test_the_settings_documentation_is_generated_from_the_settings():
    """docs/settings.md is written by `python -m magi_site.settings_docs`: regenerate it
    when a setting changes."""
    assert settings_docs.DOCS_PATH.read_text() == settings_docs.markdown()


def test_every_setting_is_documented_and_reaches_django(environ):
    loaded = load_settings()
    documented = settings_docs.markdown()
    for name, field in environment.MagiSettings.model_fields.items():
        assert field.description, name
        assert f"`{name.upper()}`" in documented
        if name.startswith("magi_"):
            assert name.upper() in loaded.django_settings()


def run_manage_check(tmp_path, **variables) -> subprocess.CompletedProcess:
    env = deployment_environment(tmp_path, **variables)
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=environment.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_manage_py_finds_the_key_make_run_kept(tmp_path):
    refused = run_manage_check(tmp_path)
    assert refused.returncode != 0 and "SECRET_KEY is not set" in refused.stderr
    (tmp_path / "secret-key").write_text("kept-by-make-run-" + "x" * 40 + "\n")
    assert run_manage_check(tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        ({"MAGI_LOG_LEVEL": "DEBUG"}, "Unknown MAGI setting(s): MAGI_LOG_LEVEL."),
        ({"MAGI_LOCAL_PARALLEL": "zero"}, "Invalid environment: MAGI_LOCAL_PARALLEL: "),
        ({}, "SECRET_KEY is not set."),
    ],
)
def test_manage_py_names_a_refused_setting_in_one_line(tmp_path, variables, message):
    key = {} if not variables else {"SECRET_KEY": "a-key-" + "x" * 40}
    refused = run_manage_check(tmp_path, **key, **variables)
    assert refused.returncode == 2
    assert refused.stderr.startswith(message)
    assert len(refused.stderr.strip().splitlines()) == 1  # no traceback
