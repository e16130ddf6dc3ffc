"""Local models: GGUF files served by llama.cpp's OpenAI-compatible server on loopback.

The engine never runs inference in-process. For a local model this module starts a server
on 127.0.0.1 (once per process, on first use) and hands back its base URL, so the call
goes through the same `openai` SDK path as any remote provider.

Two runtimes (MAGI_LOCAL_RUNTIME):
- `xllamacpp` (the default): llama.cpp's native C++ server from a prebuilt, portable wheel
  (`judgements/llm/local/process.py`), with parallel slots (a round's three calls at once),
  prompt caching and any JSON schema as a decoding grammar. Nothing to compile.
- `llama-cpp-python`: `python -m llama_cpp.server`, built from source for this CPU
  (`-march=native`), one completion at a time.

Facts about llama-cpp-python's server that shape this module (measured on 0.3.36):
- `response_format` `json_schema` is answered with HTTP 500; `{"type": "json_object",
  "schema": {...}}` works and constrains decoding with a grammar built from the schema.
- It serves one completion at a time. Concurrent non-streaming requests queue behind a lock
  in the server, so a queued request spends its client timeout waiting; `llm.Clients.slot`
  queues them on our side instead so the timeout only covers the call itself.
- GET /v1/models also waits for that lock, so it is only a good health check at start-up.
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from judgements.llm.local import loopback, warm_rules
from judgements.llm.local.files import (
    INSTALL_HINTS,
    LocalModelError,
    check_model_file,
    local_model_files,
    pinned_sha256,
    runtime_missing,
)
from judgements.llm.local.process import serving_command
from judgements.models.magi_settings import magi_settings

_STOP_GRACE_SECONDS = 5.0
# A loopback GET is cheap, and every poll interval waited past readiness delays the first call.
_HEALTH_POLL_INTERVAL = 0.05
_OUTPUT_TAIL_LINES = 200
_ERROR_TAIL_LINES = 15

# llama_cpp.server reads its settings from the environment too (pydantic-settings, any case),
# and uvicorn.run() there prefers $HOST/$PORT over --host/--port. A stray PORT, MODEL, API_KEY
# or CONFIG_FILE in our environment would silently change the server we think we started.
_SERVER_ENV_NAMES = frozenset(
    """
    model model_alias n_gpu_layers split_mode main_gpu tensor_split vocab_only use_mmap
    use_mlock kv_overrides rpc_servers seed n_ctx n_batch n_ubatch n_threads
    n_threads_batch rope_scaling_type rope_freq_base rope_freq_scale yarn_ext_factor
    yarn_attn_factor yarn_beta_fast yarn_beta_slow yarn_orig_ctx mul_mat_q logits_all
    embedding offload_kqv flash_attn last_n_tokens_size lora_base lora_path numa
    chat_format chat_template_kwargs clip_model_path cache cache_type cache_size
    hf_tokenizer_config_path hf_pretrained_model_name_or_path hf_model_repo_id
    draft_model draft_model_num_pred_tokens type_k type_v verbose host port ssl_keyfile
    ssl_certfile api_key interrupt_requests disable_ping_events root_path config_file
    models
    """.split()  # noqa: SIM905 - a word list reads better as words
)


@dataclass
class _Server:
    name: str
    path: Path
    port: int
    process: subprocess.Popen[bytes]
    output: collections.deque[str] = field(
        default_factory=lambda: collections.deque(maxlen=_OUTPUT_TAIL_LINES)
    )
    reader: threading.Thread | None = None
    started_in: float = 0.0
    warmed: warm_rules.Warmed | None = None

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/v1"

    def tail(self, lines: int = _ERROR_TAIL_LINES) -> str:
        return "\n".join(list(self.output)[-lines:]) or "(nothing)"


@dataclass
class _Slot:
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: _Server | None = None
    failure: LocalModelError | None = None
    failed_at: float = float("-inf")


_registry_lock = threading.Lock()
_slots: dict[str, _Slot] = {}
# Every server process not yet stopped, including one still starting, so that stopping at
# exit does not wait for a start-up to finish and cannot miss it.
_processes: set[subprocess.Popen[bytes]] = set()


def parallel_slots() -> int:
    """Calls one local server answers at once: llama-cpp-python's serves one at a time."""
    if magi_settings.MAGI_LOCAL_RUNTIME == "llama-cpp-python":
        return 1
    slots: int = magi_settings.MAGI_LOCAL_PARALLEL
    return slots


def states_dir() -> Path:
    """Where a local server saves and loads its slots' states (warm_rules.py)."""
    return magi_settings.MAGI_VAR_DIR / "slot-states"


def _server_command(name: str, path: Path, port: int) -> list[str]:
    context = magi_settings.MAGI_LOCAL_CONTEXT_TOKENS
    threads = magi_settings.MAGI_LOCAL_THREADS
    if magi_settings.MAGI_LOCAL_RUNTIME == "xllamacpp":
        return serving_command(
            str(path), name, port, context, parallel_slots(), threads, str(states_dir())
        )
    command = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(path),
        # The SDK sends the agent's model name; the alias makes /v1/models list that name.
        "--model_alias",
        name,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(context),
        # Only matters for streaming, where a queued request would otherwise cut the running
        # one short and leave it with half a JSON object.
        "--interrupt_requests",
        "false",
        # The server's default keeps logits for every prompt token (only logprobs needs them):
        # ~145 MiB more memory and slower prompt processing for nothing.
        "--logits_all",
        "false",
    ]
    if threads:
        command += ["--n_threads", str(int(threads))]
    return command


def _server_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.lower() not in _SERVER_ENV_NAMES}


def _pump_output(server: _Server) -> None:
    # Reading continuously keeps a chatty server from blocking on a full pipe.
    stream = server.process.stdout
    assert stream is not None
    for raw in stream:
        server.output.append(raw.decode("utf-8", "replace").rstrip())


def start_server(
    name: str,
    path: Path,
    *,
    sha256: str | None = None,
    port: int | None = None,
    timeout: float | None = None,
) -> _Server:
    """Start a server for one model and wait until it answers; blocking, bounded by `timeout`.

    Returns the running server. Raises LocalModelError with the cause and the server's last
    output when it exits, does not answer in time, or cannot be started at all.
    """
    if (problem := runtime_missing()) is not None:
        raise LocalModelError(f"Local model {name!r} cannot start: {problem}")
    sha256 = sha256 or pinned_sha256(path)
    check_model_file(name, path, sha256)
    if timeout is None:
        timeout = magi_settings.MAGI_LOCAL_SERVER_START_TIMEOUT
    port = port or loopback.free_port()
    began = time.monotonic()
    try:
        process = subprocess.Popen(
            _server_command(name, path, port),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=_server_env(),
        )
    except OSError as exc:
        raise LocalModelError(f"Local model {name!r}: cannot run {sys.executable}: {exc}") from exc
    with _registry_lock:
        _processes.add(process)
    server = _Server(name=name, path=path, port=port, process=process)
    server.reader = threading.Thread(target=_pump_output, args=(server,), daemon=True)
    server.reader.start()

    _wait_until_listed(server, began + timeout, timeout)
    if magi_settings.MAGI_LOCAL_RUNTIME == "xllamacpp":  # the runtime with slots to fill
        slots = parallel_slots()
        server.warmed = warm_rules.fill_slots(server.root, path, sha256, slots, states_dir())
    server.started_in = time.monotonic() - began
    return server


def _wait_until_listed(server: _Server, deadline: float, timeout: float) -> None:
    """Return once `server` lists its model; stop it and raise LocalModelError when it exits
    first or `deadline` passes."""
    process, name = server.process, server.name
    while True:
        if process.poll() is not None:
            _terminate(process)
            _drain(server)
            raise LocalModelError(
                f"Local model {name!r}: the llama.cpp server exited with code "
                f"{process.returncode} while starting{_cause(server)}.\n"
                f"Last output:\n{server.tail()}"
            )
        # Another program already on this port could have answered; ours must be alive, or
        # it lost the port and is about to exit.
        if loopback.lists_model(server.base_url, name) and process.poll() is None:
            return
        if time.monotonic() >= deadline:
            _terminate(process)
            _drain(server)
            raise LocalModelError(
                f"Local model {name!r}: the llama.cpp server did not answer on port "
                f"{server.port} within {timeout:g} s (MAGI_LOCAL_SERVER_START_TIMEOUT); it "
                f"was stopped.\nLast output:\n{server.tail()}"
            )
        time.sleep(_HEALTH_POLL_INTERVAL)


def _drain(server: _Server) -> None:
    # The reader reaches end-of-file once the process is gone; waiting for it makes the
    # error message carry the server's last words.
    if server.reader is not None:
        server.reader.join(2.0)


def _cause(server: _Server) -> str:
    text = "\n".join(server.output).lower()
    if "address already in use" in text or "couldn't bind http server socket" in text:
        return f" (port {server.port} is already in use)"
    if "no module named" in text or "failed to load shared library" in text:
        runtime = magi_settings.MAGI_LOCAL_RUNTIME
        return f" (the {runtime} installation is broken; {INSTALL_HINTS[runtime]})"
    if "failed to load model" in text or "error loading model" in text:
        return f" ({server.path} could not be loaded as a model)"
    return ""


def _terminate(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(_STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    with _registry_lock:
        _processes.discard(process)


def _slot(name: str) -> _Slot:
    with _registry_lock:
        return _slots.setdefault(name, _Slot())


def ensure_server(model_name: str) -> _Server:
    """Blocking: the running server for `model_name`, starting it when needed."""
    files = local_model_files()
    if model_name not in files:
        configured = ", ".join(sorted(files)) or "none"
        raise LocalModelError(
            f"No local model named {model_name!r} (configured local models: {configured})."
        )
    slot = _slot(model_name)
    arrived = time.monotonic()
    with slot.lock:
        server = slot.server
        if server is not None and server.process.poll() is None:
            if server.path == files[model_name]:
                return server
            # The name now points at another file (settings changed): serve the new one.
            _terminate(server.process)
        # Calls that queued behind a failed start share its error instead of each waiting
        # for another full start-up timeout; later calls try again.
        if slot.failure is not None and slot.failed_at >= arrived:
            raise slot.failure
        try:
            slot.server = start_server(model_name, files[model_name])
        except LocalModelError as exc:
            slot.server = None
            slot.failure = exc
            slot.failed_at = time.monotonic()
            raise
        return slot.server


async def local_base_url(model_name: str) -> str:
    """Base URL ("http://127.0.0.1:PORT/v1") of the running server for a local model."""
    server = await asyncio.to_thread(ensure_server, model_name)
    return server.base_url


def running_servers() -> dict[str, _Server]:
    with _registry_lock:
        return {
            name: slot.server
            for name, slot in _slots.items()
            if slot.server is not None and slot.server.process.poll() is None
        }


def stop_local_servers() -> None:
    """Stop every server this process started; the next call to a local model restarts it."""
    with _registry_lock:
        processes = list(_processes)
    for process in processes:
        _terminate(process)


atexit.register(stop_local_servers)
