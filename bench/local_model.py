"""Benchmark a local model as MAGI uses it: .venv/bin/python bench/local_model.py [--model M]

Measures the llama.cpp server's start-up time, seconds per decision (one call at a time),
seconds per judgement (3 rounds x 3 concurrent calls through MAGI's per-provider limit, a
new content each time), with --long N the same on 6,000+ characters of content and the
share of prompt tokens the server reports as cached, the latency of three calls sent
together with nothing queueing them on our side, and the server's peak resident memory
(VmHWM).
"""

import argparse
import asyncio
import contextlib
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import django

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")
# magi_site.settings refuses to start without a key; the benchmark signs nothing.
os.environ.setdefault("SECRET_KEY", "benchmark-only")
# The app's settings reader lives with the models, which need the app registry.
django.setup()

from local_runtimes import long_content, vm_hwm_kib  # noqa: E402  (bench/, this directory)
from openai import AsyncOpenAI  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402

from judgements.core import prompts  # noqa: E402
from judgements.core.prompts import AgentBrief, AgentVerdict, EarlierDecision  # noqa: E402
from judgements.llm import calls, completions, providers  # noqa: E402
from judgements.llm.local import files as local_files  # noqa: E402
from judgements.llm.local import provider, servers  # noqa: E402

AGENTS = {
    "Melchior": "Approve only actions that are legal where they take place.",
    "Balthasar": "Approve only actions that put nobody's health or safety at risk.",
    "Casper": "Approve only actions that can be done within the stated time and budget.",
}
# A new content for every judgement, as in real use: a server that cached one judgement's
# content would otherwise answer the next round 1 from its cache and flatter the figure.
CONTENTS = [
    "I am going to travel to Japan next week.",
    "We will repaint the office on Saturday for 300 EUR.",
    "I plan to cycle to work tomorrow morning.",
    "Ship the release on Friday after the tests pass.",
    "Book a team lunch for 8 people at 20 EUR each.",
]


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=local_files.BUNDLED_MODEL_NAME)
    parser.add_argument("--starts", type=int, default=3, help="server starts to time")
    parser.add_argument("--decisions", type=int, default=9, help="sequential calls to time")
    parser.add_argument("--judgements", type=int, default=3, help="9-call judgements to time")
    parser.add_argument(
        "--long", type=int, default=0, help="judgements on 6,000+ characters of content to time"
    )
    return parser.parse_args()


class Model:
    """The local model's server, asked as the engine asks it: its own prompt, schema and
    request (temperature, seed, max_tokens), through MAGI's per-provider limit. Keeps
    every verdict and the prompt tokens of every call."""

    def __init__(self, name: str, base_url: str) -> None:
        self.name = name
        self.client = AsyncOpenAI(base_url=base_url, api_key=provider.LOCAL_API_KEY, max_retries=0)
        self.queue = calls.Clients().slot(providers.route_for(name))
        self.verdicts: list[AgentVerdict] = []
        self.prompt_tokens: list[int] = []

    async def decide(
        self,
        agent: str,
        round_number: int,
        earlier: list[EarlierDecision],
        slot: bool = True,
        content: str = CONTENTS[0],
    ) -> tuple[AgentVerdict, float, int, int | None]:
        messages = prompts.build_messages(
            AgentBrief(agent, AGENTS[agent]), content, round_number, earlier
        )
        began = time.perf_counter()
        holder = self.queue if slot else contextlib.nullcontext()
        # The engine's own request (temperature, seed, schema, max_tokens): without them
        # the server samples with its defaults, which changes the answers and their length.
        body = completions.request_body(providers.route_for(self.name), messages)
        async with holder:
            # The body as the engine sends it (llama.cpp's schema inside json_object, which
            # the SDK's typed create() does not know), read into the SDK's ChatCompletion.
            completion = await self.client.post(
                "/chat/completions", body=body, cast_to=ChatCompletion
            )
        verdict = AgentVerdict.model_validate_json(completion.choices[0].message.content or "")
        usage = completion.usage
        assert usage is not None, "the server reports no usage"
        details = usage.prompt_tokens_details
        cached = details.cached_tokens if details is not None else None
        return verdict, time.perf_counter() - began, usage.prompt_tokens, cached

    async def judgement(self, content: str) -> tuple[float, list[tuple[int, int | None]]]:
        """Seconds for 3 rounds x 3 concurrent calls; (prompt, cached) tokens per call."""
        began = time.perf_counter()
        earlier: list[EarlierDecision] = []
        usage = []
        for rnd in (1, 2, 3):
            results = await asyncio.gather(
                *(self.decide(agent, rnd, list(earlier), content=content) for agent in AGENTS)
            )
            for agent, (verdict, _, tokens, cached) in zip(AGENTS, results, strict=True):
                earlier.append(EarlierDecision(agent, rnd, verdict.decision, verdict.reason))
                self.verdicts.append(verdict)
                self.prompt_tokens.append(tokens)
                usage.append((tokens, cached))
        return time.perf_counter() - began, usage


async def main() -> None:
    args = arguments()
    files = local_files.local_model_files()
    if args.model not in files:
        sys.exit(f"unknown local model {args.model!r}; configured: {', '.join(files) or 'none'}")
    path = files[args.model]
    print(f"model        {args.model}  ({path}, {path.stat().st_size / 2**20:.0f} MiB)")
    print(f"machine      {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    # Other work on the machine slows llama.cpp a lot; say how busy it was.
    print(f"load before  {os.getloadavg()[0]:.2f} (1-minute load average)")

    starts = []
    for _ in range(args.starts):
        server = servers.start_server(args.model, path)
        starts.append(server.started_in)
        servers._terminate(server.process)
    model = Model(args.model, await servers.local_base_url(args.model))
    server = servers.running_servers()[args.model]
    print(f"start-up     {_summary(starts)} s  (to first answer on /v1/models)")

    decisions = await time_decisions(model, args.decisions)
    await time_judgements(model, args.judgements, args.long)
    answers = decisions + len(model.verdicts)
    approvals = sum(v.decision == "approve" for v in model.verdicts)
    print(
        f"valid JSON   {answers}/{answers}  "
        f"({approvals}/{len(model.verdicts)} approvals among verdicts)"
    )
    tokens = model.prompt_tokens
    print(f"prompt       {min(tokens)}-{max(tokens)} tokens")

    unqueued = await asyncio.gather(*(model.decide(agent, 1, [], slot=False) for agent in AGENTS))
    waits = sorted(seconds for _, seconds, _, _ in unqueued)
    print(
        "3 at once    client-side latency "
        + ", ".join(f"{w:.2f}" for w in waits)
        + " s without MAGI's queue (the server's parallel slots answer them together)"
    )

    print(f"peak RSS     {vm_hwm_kib(server.process.pid) / 1024:.0f} MiB  (server VmHWM)")
    print(f"load after   {os.getloadavg()[0]:.2f}")
    servers.stop_local_servers()


async def time_decisions(model: Model, count: int) -> int:
    """Round-1 decisions one call at a time; how many were made."""
    decisions = []
    for i in range(count):
        _, seconds, tokens, _ = await model.decide(list(AGENTS)[i % 3], 1, [])
        decisions.append(seconds)
        model.prompt_tokens.append(tokens)
    print(f"decision     {_summary(decisions)} s  (round 1, one call at a time)")
    return len(decisions)


async def time_judgements(model: Model, count: int, long: int) -> None:
    """Whole judgements on a new short content each, then `long` on 6,000+ characters
    with the share of prompt tokens the server had cached."""
    judgements = []
    for number in range(count):
        seconds, _ = await model.judgement(CONTENTS[(number + 1) % len(CONTENTS)])
        judgements.append(seconds)
    print(f"judgement    {_summary(judgements)} s  (3 rounds x 3 concurrent calls, new content)")

    long_judgements, long_usage = [], []
    for number in range(long):
        # A first line of its own, so no judgement reuses another's content from the cache.
        seconds, usage = await model.judgement(f"Plan {number + 1}.\n\n{long_content()}")
        long_judgements.append(seconds)
        long_usage += usage
    if long_judgements:
        print(
            f"long         {_summary(long_judgements)} s  (the same on a "
            f"{len(long_content()):,}-character content, new each time)"
        )
        cached_counts = [cached for _, cached in long_usage if cached is not None]
        if len(cached_counts) == len(long_usage):
            share = sum(cached_counts) / sum(t for t, _ in long_usage)
            print(f"long cached  {share:.0%} of prompt tokens (the server's cached_tokens)")


def _summary(values: list[float]) -> str:
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return (
        f"median {statistics.median(values):.2f}, min {min(values):.2f}, "
        f"max {max(values):.2f} (n={len(values)})"
    )


if __name__ == "__main__":
    asyncio.run(main())
