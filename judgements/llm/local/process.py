"""Serve one GGUF model over llama.cpp's native OpenAI-compatible server (xllamacpp's
prebuilt build), in a process of its own that MAGI starts and stops (see servers.py).

    python -m judgements.llm.local.process \
        MODEL.gguf ALIAS PORT CONTEXT PARALLEL THREADS STATES STARTER

No Django here: this process only serves the model. The server runs on threads of this
process; the main thread waits until the process is told to stop, or until the process
that started it is gone.
"""

import os
import signal
import sys
import threading

# How often the main thread looks for the process that started this one. A starter killed
# before its exit handlers run (SIGKILL, or SIGTERM, which Python does not turn into an
# exit) cannot stop its server, and an orphaned llama.cpp server keeps its threads
# spinning on every core: the machine's other servers then run many times slower.
PARENT_CHECK_SECONDS = 0.5


def serving_command(
    model: str, alias: str, port: int, context: int, parallel: int, threads: int, states: str
) -> list[str]:
    """The command that serves `model` in a process of its own, started by this process
    (servers.py for MAGI, installed_rules.py at install)."""
    arguments = [model, alias, port, context, parallel, threads, states, os.getpid()]
    return [sys.executable, "-m", "judgements.llm.local.process", *map(str, arguments)]


def main(argv: list[str]) -> None:
    import xllamacpp

    # STARTER is the pid of the process that started this one, passed rather than read
    # here: a starter that died before this line would otherwise never be missed.
    path, alias, port, context, parallel, threads, states, starter = argv
    params = xllamacpp.CommonParams()
    params.model.path = path
    # The name the engine sends as `model`, and the one GET /v1/models lists.
    params.model_alias = {alias}
    params.hostnames = ["127.0.0.1"]
    params.port = int(port)
    # One cache the slots share, big enough for every slot to hold a prompt of the whole
    # context at once; measured, it was faster on long content than a cache per slot.
    params.n_parallel = int(parallel)
    params.kv_unified = True
    params.n_ctx = int(context) * int(parallel)
    # The server also keeps old prompts in host RAM (8 GiB by default); the nine prompts
    # of a judgement need a small fraction of that.
    params.cache_ram_mib = 256
    # Where warm_rules.py saves and loads a slot's state (the rules read once, loaded into
    # every slot). An idle slot stays as it is rather than moving to that RAM cache: moved,
    # a slot loaded with the rules was found empty by the next call to land on it.
    # The server joins this path and a file's name with no separator of its own.
    params.slot_save_path = os.path.join(states, "")
    params.cache_idle_slots = False
    params.ui = False
    if int(threads):
        params.cpuparams.n_threads = int(threads)
        params.cpuparams_batch.n_threads = int(threads)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = xllamacpp.Server(params)
    print(f"serving {alias} on {server.listening_address}", flush=True)
    # An orphan is adopted by another process, so its parent's id changes.
    while not stop.wait(PARENT_CHECK_SECONDS) and os.getppid() == int(starter):
        pass


if __name__ == "__main__":
    main(sys.argv[1:])
