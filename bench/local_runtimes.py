"""The llama.cpp runtimes a local model can be served by, as bench/local_runtime.py
compares them (how each is started and what format it takes an answer's schema in), and
what the local benches share: the long content and a process's peak memory."""

import argparse
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from django.test import override_settings

from judgements.core import prompts
from judgements.llm.local import files as local_files
from judgements.llm.local import servers
from judgements.models.magi_settings import magi_settings

XLLAMACPP_SLOTS = 3

# Started with `python -c`, so MAGI can run and stop it like today's server: the native
# server runs on threads of this process, and the main thread only has to stay alive.
XLLAMACPP_LAUNCHER = """\
import sys, threading
import xllamacpp as xlc
path, alias, port, n_ctx, n_parallel, kv_unified, threads = sys.argv[1:8]
params = xlc.CommonParams()
params.model.path = path
params.model_alias = {alias}
params.hostnames = ["127.0.0.1"]
params.port = int(port)
params.n_ctx = int(n_ctx)
params.n_parallel = int(n_parallel)
params.kv_unified = kv_unified == "1"
if int(threads):
    params.cpuparams.n_threads = int(threads)
    params.cpuparams_batch.n_threads = int(threads)
params.ui = False
server = xlc.Server(params)
print("xllamacpp listening on", server.listening_address, flush=True)
threading.Event().wait()
"""


def long_content() -> str:
    """A deterministic, varied ~7,000-character plan (no repeated paragraph)."""
    towns = [
        "Kyoto",
        "Osaka",
        "Nara",
        "Kanazawa",
        "Takayama",
        "Hiroshima",
        "Fukuoka",
        "Nagasaki",
        "Sapporo",
        "Sendai",
        "Nikko",
        "Hakone",
        "Matsumoto",
        "Kobe",
    ]
    acts = [
        "visit two temples and a covered market",
        "rent bicycles and ride along the river",
        "take a cooking class that uses a gas stove",
        "hike a marked mountain trail of 12 km",
        "see a baseball game in the evening",
        "swim at a public beach with lifeguards",
        "walk through the old merchant quarter",
        "try street food from licensed stalls",
    ]
    lines = [
        "Trip plan for a group of four adults, written by the organiser. We fly from Frankfurt "
        "to Tokyo next Monday and come back fourteen days later. The total budget is 9,800 "
        "euros for flights, rail passes, hotels, food and entry fees; we hold valid passports."
    ]
    for day, town in enumerate(towns, start=1):
        act = acts[day % len(acts)]
        other = acts[(day * 3) % len(acts)]
        cost = 120 + (day * 37) % 90
        lines.append(
            f"Day {day}: we take the train to {town} in the morning (seats reserved, about "
            f"{day % 4 + 1} hours), check in at a small hotel near the station that costs {cost} "
            f"euros per night for two rooms, and in the afternoon we {act}. In the evening we "
            f"{other}, eat at a family restaurant recommended by the hotel, and are back by 22:00. "
            f"Spending that day, all included, is planned at {cost + 160 + day * 5} euros."
        )
    lines.append(
        "Safety: we carry a first-aid kit, travel insurance covers all four of us, and one of "
        "us is a trained paramedic. Nobody drives; we only use trains, buses and bicycles."
    )
    return "\n\n".join(lines)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmHWM for process {pid}")


@dataclass
class Runtime:
    label: str
    concurrency: int  # calls of a round sent at once; 1 = MAGI's queue
    response_format: str  # "json_schema" or "json_object"
    kv_unified: bool = True

    def command(self, args: argparse.Namespace, path: Path, port: int) -> list[str]:
        context, threads = args.context, args.threads
        if self.label == "llama-cpp-python":
            # MAGI's own command line (context and threads from its settings), run by the
            # Python given with --llama-cpp-python (another build) when asked.
            _ = (
                magi_settings.MAGI_LOCAL_CONTEXT_TOKENS
            )  # loads the settings override_settings wraps
            with override_settings(MAGI_LOCAL_RUNTIME="llama-cpp-python"):
                command = servers._server_command(local_files.BUNDLED_MODEL_NAME, path, port)
            assert command[1:3] == ["-m", "llama_cpp.server"], command
            return [args.llama_cpp_python, *command[1:]]
        # Unified KV: one 8,192-token cache the three slots share, the same memory as the
        # single-slot server; "split" gives each slot its own full context (3x the KV cache).
        n_ctx = context if self.kv_unified else context * XLLAMACPP_SLOTS
        return [
            sys.executable,
            "-c",
            XLLAMACPP_LAUNCHER,
            str(path),
            local_files.BUNDLED_MODEL_NAME,
            str(port),
            str(n_ctx),
            str(XLLAMACPP_SLOTS),
            "1" if self.kv_unified else "0",
            str(threads),
        ]

    def response_format_body(self) -> dict:
        schema = prompts.verdict_schema()
        if self.response_format == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "verdict", "schema": schema}}
        return {"type": "json_object", "schema": schema}


RUNTIMES = {
    "llama-cpp-python": Runtime("llama-cpp-python", 1, "json_object"),
    # Each slot its own full context, as each call has today.
    "xllamacpp": Runtime("xllamacpp", XLLAMACPP_SLOTS, "json_schema", kv_unified=False),
    "xllamacpp-unified": Runtime("xllamacpp-unified", XLLAMACPP_SLOTS, "json_schema"),
}
