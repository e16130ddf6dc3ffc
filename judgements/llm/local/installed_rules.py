"""The bundled model's rules, read once at install and saved beside its file.

    python -m judgements.llm.local.installed_rules  # run by scripts/install-local-model.sh

A fresh server fills its slots with the site's default rules before its first call
(warm_rules.py): loaded from a saved state in milliseconds, or read by the model, 376
tokens, about 0.8 s of a two-core machine. The state is saved in MAGI_VAR_DIR, so the
first server of every new deployment, a newcomer's first verdict among them, used to read
them. The install reads them once more and saves the state in `slot-states/` beside the
bundled model's file, where warm_rules.py looks when MAGI_VAR_DIR has none yet.

It is a cache, like the one in MAGI_VAR_DIR: saved for other rules, another runtime or
another file, its name is not the one looked for and the rules are read as before; a file
the server refuses is read over. Nothing here fails the install: a state that cannot be
saved is said, and the install goes on.

No Django here: the install script runs this before MAGI is configured. The server is
started with MAGI's default settings (its context and slots), as `make run` starts it.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from judgements.llm.local import bundled_file, loopback, warm_rules
from judgements.llm.local.process import serving_command

ALIAS = "installing"
# MAGI_LOCAL_CONTEXT_TOKENS's and MAGI_LOCAL_PARALLEL's defaults.
CONTEXT_TOKENS = 8192
SLOTS = 3
START_SECONDS = 60.0


def save_installed_rules(model: Path, sha256: str) -> str:
    """Start a server on `model` (whose pinned checksum is `sha256`), read the default
    rules and save their state beside the file; the state file's path."""
    states = model.parent / warm_rules.INSTALLED_STATES
    port = loopback.free_port()
    command = serving_command(str(model), ALIAS, port, CONTEXT_TOKENS, SLOTS, 0, str(states))
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        root = f"http://127.0.0.1:{port}"
        _wait_until_up(server, root)
        prefix = warm_rules.rendered_rules(root)
        name = warm_rules.state_file_name(sha256, prefix)
        warm_rules.save_rules(root, prefix, name, states)
    finally:
        server.terminate()
        server.wait()
    return str(states / name)


def _wait_until_up(server: subprocess.Popen[bytes], root: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise OSError(f"the llama.cpp server exited with code {server.returncode}")
        if loopback.lists_model(f"{root}/v1", ALIAS):
            return
        time.sleep(0.05)
    raise OSError(f"the llama.cpp server did not answer within {START_SECONDS:g} s")


def main() -> int:
    model = bundled_file.converted_path()
    try:
        saved = save_installed_rules(model, bundled_file.SHA256)
    except (OSError, ValueError) as exc:
        print(f"warning: the rules were not saved beside {model.name}: {exc}", file=sys.stderr)
        print("The first judgement of each deployment reads them instead (about a second).")
        return 0
    print(f"Saved the default rules, read by the model, to {saved}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
