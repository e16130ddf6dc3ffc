"""A fresh local server's slots hold the rules before round 1 (warm_rules.py), on the real
bundled model: each of round 1's three calls at once finds them in its slot's cache, read
by the server or loaded from MAGI_VAR_DIR (from the install's state: test_installed_rules.py)."""

import asyncio

from judgements.llm.local import warm_rules
from judgements.llm.local.servers import states_dir, stop_local_servers
from tests.support.slot_rules import RULES_TOKENS_AT_LEAST, cached_tokens_of_round_one, start


async def test_every_slot_of_a_fresh_server_holds_the_rules_before_round_one(var_dir, model):
    server = await asyncio.to_thread(start, model)

    assert server.warmed is not None and server.warmed.how == "read"
    cached = await cached_tokens_of_round_one(server.base_url)
    assert min(cached) >= RULES_TOKENS_AT_LEAST, cached


async def test_the_next_server_loads_the_rules_it_saved_without_reading_them(var_dir, model):
    first = await asyncio.to_thread(start, model)
    assert first.warmed is not None
    saved = states_dir() / first.warmed.state_file
    assert saved.is_file()
    stop_local_servers()

    second = await asyncio.to_thread(start, model)

    assert second.warmed is not None and second.warmed.how == "loaded"
    cached = await cached_tokens_of_round_one(second.base_url)
    assert min(cached) >= RULES_TOKENS_AT_LEAST, cached


async def test_a_state_file_written_by_someone_else_is_refused_and_the_rules_read_again(
    var_dir, model
):
    # Whoever can write the var directory plants a file under the name the next server
    # looks for: the server refuses what is not a slot's state, and MAGI reads the rules.
    first = await asyncio.to_thread(start, model)
    assert first.warmed is not None
    saved = states_dir() / first.warmed.state_file
    stop_local_servers()
    saved.write_bytes(b"not a slot state" * 64)

    second = await asyncio.to_thread(start, model)

    assert second.warmed is not None and second.warmed.how == "read"
    assert saved.stat().st_size > 1024 * 64, "the planted file is replaced by a real state"
    cached = await cached_tokens_of_round_one(second.base_url)
    assert min(cached) >= RULES_TOKENS_AT_LEAST, cached


async def test_a_server_whose_slots_could_not_be_filled_serves_all_the_same(var_dir, model):
    # The states' directory cannot be made (a file has its name): nothing can be saved.
    var_dir.mkdir()
    states_dir().write_text("in the way")

    server = await asyncio.to_thread(start, model)

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
