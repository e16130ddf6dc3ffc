"""The path of one judgement through the code, as a reader walks it.

    .venv/bin/python bench/judgement_path.py [--calls]

Runs one judgement (three agents, three rounds, the checks a page's judgement asks for)
on the suite's OpenAI-compatible test server and follows its id: every function of
`judgements/` called with the judgement id, the judgement, one of its agents, its
in-memory deliberation or its lease among its arguments is a stop. Each function counts
once, at its first call (a reader reads a function once, however often it runs), and
stops in a row in the same file are one visit. It prints the walk, the files it crosses
and how often each is entered (docs/architecture.md states the targets: at most 8
files, none entered more than twice). `--calls` prints every stop.
"""

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PACKAGE = str(ROOT / "judgements") + os.sep
MODELS = ("path-a", "path-b", "path-c")
# A judgement id no round number, position or small count can be mistaken for.
JUDGEMENT_ID = 4242


def start_llm_server() -> subprocess.Popen:
    module = "tests.support.llm_server"
    if not (ROOT / "tests" / "support" / "llm_server.py").exists():
        module = "tests.llm_server"
    command = [sys.executable, "-m", module, "--models", ",".join(MODELS)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)


def setup_django(base_url: str, var_dir: str) -> None:
    os.environ.update(
        SECRET_KEY="bench",
        MAGI_VAR_DIR=var_dir,
        MAGI_DEFAULT_BASE_URL=base_url,
        MAGI_DEFAULT_API_KEY="bench",
        MAGI_MODELS=",".join(MODELS),
        DJANGO_SETTINGS_MODULE="magi_site.settings",
        LOG_LEVEL="WARNING",
    )
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def new_judgement() -> int:
    from judgements.models import Agent, Judgement

    case = {
        "title": "path",
        "content": "I am going to travel to Japan next week.",
        "agents": [
            {"name": f"agent-{i}", "model": model, "criteria": "Approve safe plans."}
            for i, model in enumerate(MODELS)
        ],
    }
    judgement = Judgement.from_case(case)
    judgement.pk = JUDGEMENT_ID
    judgement.save(force_insert=True)
    Agent.objects.bulk_create(Agent.rows_for(judgement.pk, case["agents"]))
    return judgement.pk


def carries_id(value: Any, depth: int = 0) -> bool:
    """The value is the judgement's id or an object holding it (read from __dict__ only,
    so following the id never queries the database)."""
    if type(value) is int:
        return value == JUDGEMENT_ID
    attributes = getattr(value, "__dict__", None)
    if not isinstance(attributes, dict) or depth > 1:
        return False
    for name in ("judgement_id", "id", "pk"):
        if attributes.get(name) == JUDGEMENT_ID and (
            name == "judgement_id" or type(value).__name__ == "Judgement"
        ):
            return True
    judgement = attributes.get("judgement")
    return judgement is not None and carries_id(judgement, depth + 1)


class Walk:
    def __init__(self) -> None:
        self.seen: set[Any] = set()
        self.stops: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if not code.co_filename.startswith(PACKAGE) or code in self.seen:
            return
        arguments = [frame.f_locals.get(name) for name in code.co_varnames[: code.co_argcount]]
        arguments += list(frame.f_locals.get("args", ()) or ())
        arguments += list((frame.f_locals.get("kwargs", {}) or {}).values())
        if not any(carries_id(value) for value in arguments):
            return
        with self.lock:
            if code in self.seen:
                return
            self.seen.add(code)
            relative = os.path.relpath(code.co_filename, ROOT / "judgements")
            self.stops.append((relative, code.co_qualname))


def run(walk: Walk, judgement_id: int) -> None:
    from judgements.engine.runner import EngineRunner

    async def one() -> None:
        runner = EngineRunner()
        threading.setprofile(walk.profile)
        sys.setprofile(walk.profile)
        try:
            assert await runner.run_judgement(judgement_id)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]

    asyncio.run(one())


def report(walk: Walk, every_call: bool) -> None:
    visits: list[str] = []
    for path, name in walk.stops:
        if every_call:
            print(f"  {path}: {name}")
        if not visits or visits[-1] != path:
            visits.append(path)
    entered = Counter(visits)
    print(f"stops: {len(walk.stops)}, visits: {len(visits)}, files: {len(entered)}")
    print("walk: " + " -> ".join(Path(path).stem for path in visits))
    for path, times in entered.most_common():
        print(f"  {times}x {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", action="store_true", help="print every stop")
    args = parser.parse_args()
    server = start_llm_server()
    try:
        base_url = (server.stdout.readline() if server.stdout else "").strip()
        with tempfile.TemporaryDirectory() as var_dir:
            setup_django(base_url, var_dir)
            walk = Walk()
            run(walk, new_judgement())
            from judgements.models import Judgement

            print(f"judgement {JUDGEMENT_ID}: {Judgement.objects.get(pk=JUDGEMENT_ID).status}")
            report(walk, args.calls)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
