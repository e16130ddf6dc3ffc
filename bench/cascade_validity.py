"""Does a cascade's certificate keep its promise (issue 56, docs/escalation.md)?

    .venv/bin/python bench/cascade_validity.py [--suites 300] [--sizes 96,256]
    .venv/bin/python bench/cascade_validity.py --through-server 5 --size 64

Without --through-server: for each cascade of tests/support/cascade_simulation.py (each
level drawn from one of the single panel's known distributions) and each suite size,
`--suites` synthetic labelled suites certified by judgements/core/cascade.py, each
certified chain checked against the true accuracy of what its rules keep in a population
of 400,000: how many certified, how many of those keep verdicts less than the target
accurate ("broken": the promise allows delta of the suites), and the mean true share kept.

With --through-server N: the null cascade end to end, on the suite's OpenAI-compatible
test server (tests/support/llm_server.py). For each of N suites, two saved panels (level 1
escalating to level 2), each on a model scripted per case to be right with probability
0.85 whatever the confidence it states (uniform in 0.5..1): no rule of either level can
keep verdicts 90 % right, so every certification is broken. Each level's evaluation run
goes through intake and the engine like any, and the chain is certified from the stored
runs by judgements/evaluations/cascade.py, as `manage.py certify_cascade` does.
"""

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.cascade_simulation import CASCADES, tally  # noqa: E402 - after the path

if TYPE_CHECKING:
    import numpy
    from django.contrib.auth.models import User

    from judgements.models import Panel, Suite
    from tests.support.llm_server import FakeLLM

TARGET, DELTA = 0.9, 0.1
RIGHT = 0.85  # the null: every verdict of every level right this often


def simulated(suites: int, sizes: list[int]) -> None:
    print(f"target {TARGET:.0%}, delta {DELTA}\n")
    print("| cascade | cases | certified | broken (rate) | coverage |")
    print("| --- | --- | --- | --- | --- |")
    for name in CASCADES:
        for size in sizes:
            began = time.perf_counter()
            found = tally(name, suites=suites, size=size, seed=21, target=TARGET, delta=DELTA)
            print(
                f"| {name} | {size} | {found.certified} of {suites} | {found.broken} "
                f"({found.broken_rate:.1%}) | {found.coverage:.1%} |  "
                f"({time.perf_counter() - began:.0f} s)",
                flush=True,
            )


def through_server(suites: int, size: int, seed: int) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import numpy
    import panel_quality  # noqa: F401 - sets Django up on a throwaway database
    from django.contrib.auth import get_user_model

    from judgements.evaluations import cascade

    server = serve_scripted_models()
    owner = get_user_model().objects.create_user("bench")
    random = numpy.random.default_rng(seed)
    certified = 0
    for number in range(suites):
        began = time.perf_counter()
        suite, cases = null_suite(owner, number, size)
        chain = null_chain(server, owner, number, cases, random)
        run_levels(chain, suite, owner)
        found = cascade.certify_cascade(chain[0], target=TARGET, delta=DELTA)
        certified += found.certified
        print(
            f"suite {number + 1}: {size} cases, certified {found.certified}, kept {found.kept} "
            f"({time.perf_counter() - began:.0f} s)",
            flush=True,
        )
    server.stop()
    print(
        f"\nthrough the server: {certified} of {suites} null suites certified "
        f"(every one a false certificate; the promise allows {DELTA:.0%})"
    )


def serve_scripted_models() -> "FakeLLM":
    """The suite's OpenAI-compatible test server, the only provider, on a migrated database."""
    from django.core.management import call_command

    from judgements.models.magi_settings import magi_settings
    from tests.support.llm_server import FakeLLM

    server = FakeLLM().start()
    magi_settings.MAGI_PROVIDERS = {
        "fake": {
            "base_url": server.base_url,
            "api_key": "bench",
            "structured_output": "json_schema",
            "models": server.models,
            "timeout": 10.0,
            "temperature": 0.0,
            "seed": 0,
            "concurrency": None,
            "discover": False,
        }
    }
    magi_settings.MAGI_LOCAL_MODELS = {}
    call_command("migrate", verbosity=0)
    return server


def null_suite(owner: "User", number: int, size: int) -> tuple["Suite", list[dict[str, str]]]:
    """A labelled suite of `size` cases, every one expected approved, each with a marker
    the scripted models answer by."""
    from judgements.evaluations import suites as suite_files

    cases = [
        {"id": f"c{i}", "content": f"marker-{number}-{i}: a plan.", "expected": "approve"}
        for i in range(size)
    ]
    data = "".join(
        f'{{"id": "{c["id"]}", "content": "{c["content"]}", "expected": "approve"}}\n'
        for c in cases
    )
    suite = suite_files.import_suite(name=f"null {number}", description="", owner=owner, data=data)
    return suite, cases


def null_chain(
    server: "FakeLLM",
    owner: "User",
    number: int,
    cases: list[dict[str, str]],
    random: "numpy.random.Generator",
) -> list["Panel"]:
    """Level 1 escalating to level 2, each on its own model scripted per case to be right
    with probability RIGHT whatever the confidence it states."""
    from judgements.models import Panel

    chain: list[Panel] = []
    for level in (2, 1):
        model = f"level{level}-{number}"
        script = server.script(model, votes="AAA")
        for case in cases:
            marker = case["content"].split(":")[0] + ":"
            right = random.uniform() < RIGHT
            script.votes_when[marker] = "AAA" if right else "RRR"
            script.confidence_when[marker] = round(float(random.uniform(0.5, 1.0)), 2)
        agents = [
            {"name": name, "model": model, "criteria": f"Approve only plans ({name})."}
            for name in ("Melchior", "Balthasar", "Casper")
        ]
        chain.insert(
            0,
            Panel.objects.create(
                name=f"level {level} of {number}",
                owner=owner,
                agents=agents,
                escalate_to=chain[0] if chain else None,
            ),
        )
    return chain


def run_levels(chain: list["Panel"], suite: "Suite", owner: "User") -> None:
    """Each level's evaluation run on the suite, through intake and the engine like any."""
    import asyncio

    from judgements.engine.runner import EngineRunner
    from judgements.evaluations import runs

    for panel in chain:
        run = runs.start_run(
            panel=panel, agents=panel.agents, panel_name=panel.name, suite=suite,
            repeats=1, creator=owner, plain_call=False,
        )  # fmt: skip
        for pk in run.judgements.values_list("pk", flat=True):
            asyncio.run(EngineRunner(worker_id="bench").run_judgement(pk))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suites", type=int, default=300)
    parser.add_argument("--sizes", default="96,256")
    parser.add_argument("--through-server", type=int, default=0, metavar="N")
    parser.add_argument("--size", type=int, default=64, help="cases per suite, --through-server")
    args = parser.parse_args()
    if args.through_server:
        through_server(args.through_server, args.size, seed=31)
    else:
        simulated(args.suites, [int(size) for size in args.sizes.split(",")])


if __name__ == "__main__":
    main()
