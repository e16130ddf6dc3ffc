"""The path of one judgement through the code, as a reader walks it.

    .venv/bin/python bench/judgement_path.py [--calls]

Runs one judgement (three agents, three rounds, the checks a page's judgement asks for)
on the suite's OpenAI-compatible test server and follows its id (tests/support/
judgement_path.py says how): it prints the figure docs/architecture.md publishes (every
entry into a file along the judgement, and the files entered), the stops, and how often
each file is entered. tests/packaging/test_judgement_path.py holds the page's figure to
this measure: when the engine changes, copy the "figure:" line into the page. `--calls`
prints every stop (an entry into its file marked `>`); `--json` prints the stops as JSON
(tests/packaging/test_judgement_path.py reads them: a fresh process, so every thread the
engine uses is followed from its start).
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import bench_site, judgement_path  # noqa: E402

MODELS = ("path-a", "path-b", "path-c")


def start_llm_server() -> subprocess.Popen:
    return bench_site.start_llm_server(MODELS)


def setup_django(base_url: str, var_dir: str) -> None:
    bench_site.setup_django(base_url, var_dir, MODELS)


def walk_one() -> judgement_path.Walk:
    from judgements.engine.runner import EngineRunner
    from judgements.intake.json_cases import validate_case

    case = {
        "title": "path",
        "content": "I am going to travel to Japan next week.",
        "agents": [
            {"name": f"agent-{i}", "model": model, "criteria": "Approve safe plans."}
            for i, model in enumerate(MODELS)
        ],
    }
    judgement_id = judgement_path.store_judgement(validate_case(case, None))
    return asyncio.run(judgement_path.follow(EngineRunner(), judgement_id))


def figure(walk: judgement_path.Walk) -> str:
    """The figure as docs/architecture.md words it."""
    found = walk.figures()
    return f"{found['entries']} entries into {found['files']} files"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", action="store_true", help="print every stop")
    parser.add_argument("--json", action="store_true", help="print the stops as JSON")
    parser.add_argument("--lease-seconds", help="MAGI_LEASE_SECONDS for the run")
    args = parser.parse_args()
    if args.lease_seconds:
        os.environ["MAGI_LEASE_SECONDS"] = args.lease_seconds
    server = start_llm_server()
    try:
        base_url = (server.stdout.readline() if server.stdout else "").strip()
        with tempfile.TemporaryDirectory() as var_dir:
            setup_django(base_url, var_dir)
            walk = walk_one()
            from judgements.models import Judgement

            status = Judgement.objects.get(pk=judgement_path.JUDGEMENT_ID).status
            if args.json:
                print(json.dumps({"status": status, "stops": walk.stops}))
                return
            print(f"judgement {judgement_path.JUDGEMENT_ID}: {status}")
            walk.report(figure(walk), args.calls)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
