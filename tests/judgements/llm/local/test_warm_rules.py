"""A fresh local server's slots hold the rules before round 1 (warm_rules.py), on the real
bundled model: each of round 1's three calls at once finds them in its slot's cache."""

import asyncio
from typing import cast

import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

from judgements.core import prompt_variants, prompts
from judgements.llm.local import warm_rules
from judgements.llm.local.files import BUNDLED_MODEL_NAME
from judgements.llm.local.provider import LOCAL_API_KEY
from judgements.llm.local.servers import start_server, stop_local_servers

# The default rules are 376 tokens on the bundled model's tokenizer; a call that found
# none of them cached reports 0.
RULES_TOKENS_AT_LEAST = 300


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.MAGI_VAR_DIR = tmp_path
    return tmp_path


def round_one(content: str) -> list[list[dict[str, str]]]:
    """Round 1 of three agents as the engine asks it under the site's default variants."""
    variants = prompt_variants.resolve(None)
    agents = [
        prompts.AgentBrief("Melchior", "Approve only plans that are legal."),
        prompts.AgentBrief("Balthasar", "Approve only plans that are safe for the traveller."),
        prompts.AgentBrief("Casper", "Approve only plans that fit a one-week holiday."),
    ]
    return [prompts.build_messages(a, content, 1, [], variants=variants) for a in agents]


async def cached_tokens_of_round_one(base_url: str) -> list[int]:
    client = AsyncOpenAI(base_url=base_url, api_key=LOCAL_API_KEY, timeout=120, max_retries=0)

    async def cached(messages: list[dict[str, str]]) -> int:
        completion = await client.chat.completions.create(
            model=BUNDLED_MODEL_NAME,
            messages=cast(list[ChatCompletionMessageParam], messages),
            max_tokens=1,
            temperature=0,
        )
        assert completion.usage is not None
        details = completion.usage.prompt_tokens_details
        return details.cached_tokens or 0 if details is not None else 0

    # At once, as the engine sends a round: each call lands on a slot of its own.
    return list(await asyncio.gather(*(cached(m) for m in round_one("A week in Japan."))))


async def test_every_slot_of_a_fresh_server_holds_the_rules_before_round_one(var_dir, bundled_path):
    server = await asyncio.to_thread(start_server, BUNDLED_MODEL_NAME, bundled_path)

    assert server.warmed is not None and server.warmed.how == "read"
    cached = await cached_tokens_of_round_one(server.base_url)
    assert min(cached) >= RULES_TOKENS_AT_LEAST, cached


async def test_the_next_server_loads_the_rules_it_saved_without_reading_them(var_dir, bundled_path):
    first = await asyncio.to_thread(start_server, BUNDLED_MODEL_NAME, bundled_path)
    assert first.warmed is not None
    saved = warm_rules.states_dir() / first.warmed.state_file
    assert saved.is_file()
    stop_local_servers()

    second = await asyncio.to_thread(start_server, BUNDLED_MODEL_NAME, bundled_path)

    assert second.warmed is not None and second.warmed.how == "loaded"
    cached = await cached_tokens_of_round_one(second.base_url)
    assert min(cached) >= RULES_TOKENS_AT_LEAST, cached


async def test_a_state_file_written_by_someone_else_is_refused_and_the_rules_read_again(
    var_dir, bundled_path
):
    # Whoever can write the var directory plants a file under the name the next server
    # looks for: the server refuses what is not a slot's state, and MAGI reads the rules.
    first = await asyncio.to_thread(start_server, BUNDLED_MODEL_NAME, bundled_path)
    assert first.warmed is not None
    saved = warm_rules.states_dir() / first.warmed.state_file
    stop_local_servers()
    saved.write_bytes(b"not a slot state" * 64)

    second = await asyncio.to_thread(start_server, BUNDLED_MODEL_NAME, bundled_path)

    assert second.warmed is not None and second.warmed.how == "read"
    assert saved.stat().st_size > 1024 * 64, "the planted file is replaced by a real state"
    cached = await cached_tokens_of_round_one(second.base_url)
    assert min(cached) >= RULES_TOKENS_AT_LEAST, cached


async def test_a_server_whose_slots_could_not_be_filled_serves_all_the_same(var_dir, bundled_path):
    # The states' directory cannot be made (a file has its name): nothing can be saved.
    warm_rules.states_dir().write_text("in the way")

    server = await asyncio.to_thread(start_server, BUNDLED_MODEL_NAME, bundled_path)

    assert server.warmed is not None and server.warmed.how == "failed"
    assert "slot-states" in server.warmed.why
    assert len(await cached_tokens_of_round_one(server.base_url)) == 3


def test_the_state_file_is_named_by_the_model_and_the_rules_it_holds():
    # A state saved by another model file must never be loaded: its tokens may be the
    # prompt's while its cached values are another model's, and the server would reuse
    # them. One saved for other rules would only go unused, and be read again each time.
    name = warm_rules.state_file_name("model-a", "<|im_start|>system\nrules")

    assert name == warm_rules.state_file_name("model-a", "<|im_start|>system\nrules")
    assert name != warm_rules.state_file_name("model-b", "<|im_start|>system\nrules")
    assert name != warm_rules.state_file_name("model-a", "<|im_start|>system\nrules.")
    assert name.endswith(".bin") and "/" not in name
