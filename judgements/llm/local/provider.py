"""The local models as one more provider (judgements/llm/providers.py): how the engine
asks them, each call going to the server servers.py starts for its model on first use."""

from judgements.core.settings_read import ProviderConfig
from judgements.llm.local.files import local_model_files
from judgements.llm.local.servers import local_base_url, parallel_slots
from judgements.models.magi_settings import magi_settings

# A shorter budget cuts the JSON off mid-string; 160 was the measured floor with a
# 200-character reason, and the grammar stops generation once the object is closed anyway.
LOCAL_MAX_TOKENS = 256
# The server accepts any key, but the SDK refuses to send none.
LOCAL_API_KEY = "local"


def structured_outputs(models: list[str]) -> dict[str, str]:
    """How llm/completions.py asks the local servers for each model's JSON. Both runtimes
    take the schema inside `json_object` (llama-cpp-python's answers `json_schema` with
    HTTP 500), where the verdict's ties the decision to `criterion_met`; xllamacpp's
    server, built with llguidance, also takes it as a grammar that fixes the JSON's
    whitespace, for the models MAGI_LOCAL_FIXED_JSON names. That layout made the bundled
    model's first verdict 2 s faster, and Qwen2.5-Coder-1.5B's first answers less often
    right (docs/benchmarks.md), so it is chosen per model."""
    fixed = magi_settings.MAGI_LOCAL_FIXED_JSON
    llguidance = magi_settings.MAGI_LOCAL_RUNTIME == "xllamacpp"
    return {m: "llguidance" if llguidance and m in fixed else "json_object" for m in models}


def provider() -> ProviderConfig:
    """Local models as one more provider: its endpoint is the server servers.py starts for
    each model, and it answers as many calls at once as the server has slots."""
    models = sorted(local_model_files())
    return ProviderConfig(
        base_url=None,
        api_key=LOCAL_API_KEY,
        structured_output="json_object",
        structured_outputs=structured_outputs(models),
        models=models,
        timeout=magi_settings.MAGI_LOCAL_TIMEOUT,
        temperature=magi_settings.MAGI_LLM_TEMPERATURE,
        seed=magi_settings.MAGI_LLM_SEED,
        max_tokens=max(magi_settings.MAGI_LLM_MAX_TOKENS, LOCAL_MAX_TOKENS),
        concurrency=parallel_slots(),
        discover=False,
        server=local_base_url,
    )
