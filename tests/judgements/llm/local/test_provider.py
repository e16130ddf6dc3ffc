"""The local models as a provider (provider.py): how each model is asked for JSON."""

import pytest

from judgements.llm import providers
from judgements.llm.local.files import BUNDLED_MODEL_NAME
from judgements.models.magi_settings import magi_settings


@pytest.mark.parametrize(
    ("runtime", "fixed", "bundled", "own"),
    [
        # The default: the bundled model's JSON laid out, your own model's free.
        ("xllamacpp", ["smollm2-135m"], "llguidance", "json_object"),
        ("xllamacpp", ["smollm2-135m", "my-model"], "llguidance", "llguidance"),
        ("xllamacpp", [], "json_object", "json_object"),
        # llama-cpp-python's server has no llguidance: its own grammar, whitespace free.
        ("llama-cpp-python", ["smollm2-135m", "my-model"], "json_object", "json_object"),
    ],
)
def test_each_model_is_asked_for_json_the_way_its_runtime_and_setting_say(
    settings, tmp_path, runtime, fixed, bundled, own
):
    magi_settings.MAGI_LOCAL_MODELS = {"my-model": str(tmp_path / "own.gguf")}
    magi_settings.MAGI_LOCAL_RUNTIME = runtime
    magi_settings.MAGI_LOCAL_FIXED_JSON = fixed

    assert providers.route_for(BUNDLED_MODEL_NAME).structured_output == bundled
    assert providers.route_for("my-model").structured_output == own
