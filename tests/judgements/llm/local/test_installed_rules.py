"""The bundled model's rules read at install and saved beside its file
(installed_rules.py): a new deployment's first server loads them, on the real model."""

import asyncio
from pathlib import Path

import pytest

from judgements.llm.local import bundled_file, installed_rules, warm_rules
from judgements.llm.local.servers import states_dir
from tests.support.slot_rules import RULES_TOKENS_AT_LEAST, cached_tokens_of_round_one, start

PLANTED = b"not a slot state" * 64


def contents(path: Path) -> bytes:
    return path.read_bytes()


def plant(path: Path, data: bytes) -> None:
    path.write_bytes(data)


async def test_a_new_deployment_s_first_server_loads_the_rules_the_install_saved(var_dir, model):
    installed = Path(installed_rules.save_installed_rules(model, bundled_file.SHA256))
    assert installed.parent == model.parent / warm_rules.INSTALLED_STATES

    server = await asyncio.to_thread(start, model)

    assert server.warmed is not None and server.warmed.how == "loaded"
    assert server.warmed.state_file == installed.name
    assert contents(states_dir() / installed.name) == contents(installed)
    cached = await cached_tokens_of_round_one(server.base_url)
    assert min(cached) >= RULES_TOKENS_AT_LEAST, cached


async def test_an_installed_state_the_server_refuses_is_read_over_in_the_var_directory(
    var_dir, model
):
    # A file beside the model under the name looked for, that is no slot's state: the
    # server refuses it, the rules are read and saved in MAGI_VAR_DIR, the install's file
    # is left as it is.
    installed = Path(installed_rules.save_installed_rules(model, bundled_file.SHA256))
    plant(installed, PLANTED)

    server = await asyncio.to_thread(start, model)

    assert server.warmed is not None and server.warmed.how == "read"
    assert len(contents(states_dir() / installed.name)) > len(PLANTED)
    assert contents(installed) == PLANTED
    cached = await cached_tokens_of_round_one(server.base_url)
    assert min(cached) >= RULES_TOKENS_AT_LEAST, cached


def test_the_install_says_why_when_the_server_cannot_start(tmp_path):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)

    with pytest.raises(OSError, match="exited with code"):
        installed_rules.save_installed_rules(broken, bundled_file.SHA256)
    assert not (tmp_path / warm_rules.INSTALLED_STATES).exists()
