"""How long a person's judgement takes while an evaluation run uses the same provider.

    .venv/bin/python bench/people_first.py [--cases 8] [--call-seconds 0.5] [--slots 1]

On the suite's fake OpenAI-compatible server, every call answers after --call-seconds (a
slow model) and the provider takes --slots calls at once (a local llama.cpp server: 1).
It times one judgement alone, then an evaluation run of --cases cases, and the same
judgement submitted once the run's calls are under way, through MAGI's engine
(EngineRunner, the priority call slots of judgements/llm/call_slots.py). It prints the person's
time alone, beside the run, and what arrival order would have cost: the run's calls
queued ahead of it. Run by hand; the numbers belong in a note, not in a test.
"""

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# Sets Django up on a throwaway SQLite database, as every bench of panels does.
import panel_quality  # noqa: F401
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.core.management import call_command

from judgements.core import rules
from judgements.engine.runner import EngineRunner
from judgements.evaluations import runs, suites
from judgements.intake.schemas import CaseJson, validated
from judgements.intake.start import Submission, submit
from judgements.models import Judgement
from judgements.models.magi_settings import magi_settings
from tests.support.llm_server import FakeLLM

MODELS = ("model-a", "model-b", "model-c")
AGENTS = [
    {"name": name, "model": model, "criteria": f"{name} approves only safe plans."}
    for name, model in zip(("Melchior", "Balthasar", "Casper"), MODELS, strict=True)
]


def serve(call_seconds: float, slots: int) -> FakeLLM:
    server = FakeLLM().start()
    for model in MODELS:
        server.script(model, votes="AAA", delay=call_seconds)
    magi_settings.MAGI_PROVIDERS = {
        "fake": {
            "base_url": server.base_url,
            "api_key": "bench",
            "structured_output": "json_schema",
            "models": list(MODELS),
            "timeout": 60.0,
            "temperature": 0.0,
            "seed": 0,
            "concurrency": slots,
            "discover": False,
        }
    }
    magi_settings.MAGI_LOCAL_MODELS = {}
    return server


def person_judgement(user) -> Judgement:
    case = {"title": "A person's", "content": "A train ticket, 40 EUR.", "agents": AGENTS}
    return submit([validated(CaseJson, case).case()], Submission(creator=user)).judgement


async def timed(runner: EngineRunner, judgement_id: int) -> float:
    began = time.perf_counter()
    assert await runner.run_judgement(judgement_id)
    return time.perf_counter() - began


async def measure(cases: int, user) -> tuple[float, float, int]:
    runner = EngineRunner(worker_id="bench")
    alone = await timed(runner, (await sync_to_async(person_judgement)(user)).pk)
    lines = "".join(
        f'{{"id": "c{n}", "content": "case {n}", "expected": "approve"}}\n' for n in range(cases)
    )
    suite = await sync_to_async(suites.import_suite)(
        name="bench", description="", owner=user, data=lines
    )
    run = await sync_to_async(runs.start_run)(
        panel=None, agents=AGENTS, panel_name="bench", suite=suite, repeats=1, creator=user
    )
    await runner.run_single_cycle()  # the run's judgements start; their calls queue
    (slots,) = runner.clients.call_slots.values()
    while slots.waiting(batch=True) + slots.batch_held < cases * rules.PANEL_SIZE:
        await slots.changed()  # every round-1 call of the run is queued or in flight
    queued = slots.waiting(batch=True) + slots.batch_held
    beside = await timed(runner, (await sync_to_async(person_judgement)(user)).pk)
    tasks = list(runner.running.values())
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await sync_to_async(runs.cancel)(run, user)
    return alone, beside, queued


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--call-seconds", type=float, default=0.5)
    parser.add_argument("--slots", type=int, default=1)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    server = serve(args.call_seconds, args.slots)
    user = get_user_model().objects.create_user("bench")
    try:
        alone, beside, queued = asyncio.run(measure(args.cases, user))
    finally:
        server.stop()
    calls = rules.PANEL_SIZE * rules.ROUNDS
    print(f"provider slots {args.slots}, {args.call_seconds:g} s a call, run of {args.cases}")
    print(f"a person's judgement alone:          {alone:6.1f} s ({calls} calls)")
    print(f"the same beside the run:             {beside:6.1f} s ({beside / alone:.2f}x)")
    wait = queued * args.call_seconds / args.slots
    print(f"in arrival order it would first wait for the {queued} run calls queued ahead:")
    print(f"  at least {wait:.1f} s more in round 1 alone")


if __name__ == "__main__":
    main()
