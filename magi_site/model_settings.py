"""The settings of the models MAGI calls: one provider's endpoint (`MAGI_DEFAULT_*`,
`MAGI_PROVIDER_<NAME>_*`), the models and providers, and the local models MAGI starts."""

from typing import Literal

from pydantic import ValidationError, field_validator

# Re-exported: the shape is the app's view of the setting (judgements/core/settings_read.py),
# which the site writes.
from judgements.core.settings_read import ProviderConfig as ProviderConfig
from magi_site.settings_kit import (
    CommaList,
    Env,
    FloatMap,
    PairMap,
    SettingRefused,
    StructuredOutput,
    describe,
    parse_seed,
    setting,
    split_list,
)


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


def read_provider(prefix: str) -> ProviderSettings:
    try:
        return ProviderSettings(_env_prefix=prefix)
    except ValidationError as exc:
        raise SettingRefused(f"Invalid environment: {describe(exc, prefix)}") from None


class ModelSettings(Env):
    """Models and providers."""

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


class LocalModelSettings(Env):
    """Local models (a llama.cpp server MAGI starts)."""

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
    magi_local_fixed_json: CommaList = setting(
        ["smollm2-135m"],
        "local models whose JSON answers are laid out with one space after each colon and "
        "comma and no other whitespace (xllamacpp only): fewer tokens to write, so faster, "
        "but other tokens next, so sometimes another answer; the others write any "
        "whitespace they like. Comma-separated; empty for none",
    )
