"""A fresh local server's slots, each filled with the site's default rules before its first
call, so a judgement's round 1 reads only what follows them.

Every agent's prompt starts with the same system message, the rules (core/prompts.py
`rules_text`). A running server keeps each slot's last prompt and reads again only what
differs, but a fresh one starts with empty slots, and round 1's three calls at once each
read the rules in full: on the bundled model, 376 of a call's 550 prompt tokens, three
times over, about 2 s of the first judgement's round 1 on a two-core machine
(docs/benchmarks.md, "Where the first verdict's time goes"). llama.cpp's server reuses a
prompt only within one slot, so MAGI reads the rules once into slot 0, saves that slot's
state to a file and loads it into the others, which takes milliseconds. The file is kept
in MAGI_VAR_DIR, named by what it depends on (the model file's checksum, the runtime's
version, the rendered rules), so the next server started for the same model reads no rules
at all. The install saves the bundled model's beside its file (installed_rules.py), so even
a fresh MAGI_VAR_DIR's first server, a newcomer's first verdict, loads them: a state found
there and not yet in MAGI_VAR_DIR is copied in first.

This is a cache and only a cache: what the model answers does not depend on it, and a
failure here (an old server without the slot endpoints, a file it refuses, a full disk)
leaves the slots empty, logged, and the server serving as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import urllib.error
import urllib.request
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from judgements.core import prompt_variants, prompts
from judgements.core.json_values import JsonObject, JsonValue
from judgements.llm.local import loopback

logger = logging.getLogger(__name__)

# A user message no prompt contains: the rendered rules end where it starts.
_MARK = "\x00magi-rules-end\x00"
# Generous for a few hundred tokens on a slow machine; a server that takes longer is left
# to read the rules with round 1, as it would without this module.
_TIMEOUT_SECONDS = 30.0
# Where a model's states saved at install live: this folder beside the model's file.
INSTALLED_STATES = "slot-states"


@dataclass(frozen=True)
class Warmed:
    """How the slots were filled: `read` when the server read the rules (no state file
    yet, or one it refused), `loaded` when every slot took them from the file, `failed`
    (with why) when the slots were left empty."""

    how: str
    state_file: str = ""
    why: str = ""


def fill_slots(root: str, model: Path, sha256: str | None, slots: int, states: Path) -> Warmed:
    """Fill every slot of the xllamacpp server at `root` (http://127.0.0.1:PORT, started
    with `states` as its slot save path, serving the file `model`, whose checksum is
    `sha256` when pinned) with the default rules."""
    try:
        model_identity = sha256 or _file_identity(model)
        prefix = rendered_rules(root)
        name = state_file_name(model_identity, prefix)
        installed = model.parent / INSTALLED_STATES / name
        if not (states / name).exists() and installed.is_file():
            states.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(installed, states / name)
        first = _post(root, "/slots/0?action=restore", {"filename": name}, missing_ok=True)
        restored = first.get("n_restored") if first is not None else None
        how = "loaded"
        if not isinstance(restored, int) or restored <= 0:
            how = "read"
            save_rules(root, prefix, name, states)
        for slot in range(1, slots):
            _post(root, f"/slots/{slot}?action=restore", {"filename": name})
    except (OSError, ValueError) as exc:
        logger.warning("local server at %s: slots not filled with the rules: %s", root, exc)
        return Warmed("failed", why=str(exc))
    logger.info("local server at %s: %d slots filled with the rules (%s)", root, slots, how)
    return Warmed(how, state_file=name)


def save_rules(root: str, prefix: str, name: str, states: Path) -> None:
    """Read `prefix` (the rendered rules) into slot 0 of the server at `root` and save that
    slot's state as `name` in `states`, the server's slot save path."""
    _post(root, "/completion", {"prompt": prefix, "n_predict": 0, "id_slot": 0})
    # The server saves into this directory and does not make it.
    states.mkdir(parents=True, exist_ok=True)
    _post(root, "/slots/0?action=save", {"filename": name})


def rendered_rules(root: str) -> str:
    """The default rules as the server's own chat template renders the start of a prompt:
    every character of a real prompt before its user message's text."""
    rules = prompts.rules_text(prompt_variants.resolve(None), 1)
    messages: list[JsonValue] = [
        {"role": "system", "content": rules},
        {"role": "user", "content": _MARK},
    ]
    answer = _post(root, "/apply-template", {"messages": messages})
    rendered = str((answer or {}).get("prompt", ""))
    if _MARK not in rendered:
        raise ValueError("the chat template did not render the rules' prompt")
    return rendered[: rendered.index(_MARK)]


def _file_identity(path: Path) -> str:
    # Your own GGUF has no pinned checksum, and hashing a gigabyte at every start would cost
    # more than the rules it saves reading: its place, size and time stand for it.
    stat = path.stat()
    return f"{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def state_file_name(model_identity: str, prefix: str) -> str:
    """A name that changes whenever the saved state would: another model file, another
    llama.cpp build (its state format), other rules or another chat template."""
    try:
        runtime = version("xllamacpp")
    except PackageNotFoundError:
        runtime = "unknown"
    key = hashlib.sha256("\n".join([model_identity, runtime, prefix]).encode()).hexdigest()
    return f"rules-{key[:32]}.bin"


def _post(root: str, path: str, body: JsonObject, missing_ok: bool = False) -> JsonObject | None:
    request = urllib.request.Request(
        root + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with loopback.open_direct(request, timeout=_TIMEOUT_SECONDS) as reply:
            answer = json.load(reply)
    except urllib.error.HTTPError as exc:
        # A restore from a file not saved yet is how the first server for a model learns
        # it has to read the rules itself.
        if missing_ok:
            return None
        raise OSError(f"{path}: HTTP {exc.code}: {exc.read()[:200]!r}") from None
    if not isinstance(answer, dict):
        raise ValueError(f"{path}: the server answered {answer!r}")
    return answer
