"""Load benchmark: many concurrent judgements through the real web form and engine.

    .venv/bin/python bench/load.py                      # both set-ups below
    .venv/bin/python bench/load.py --mode embedded -n 200
    .venv/bin/python bench/load.py --mode scaled -n 1000 --workers 2

embedded: the default one-machine set-up: daphne with SQLite, the in-memory channel layer
          and the engine inside the web process.
scaled:   PostgreSQL + Redis (throwaway servers, as in tests/durability), one daphne and
          N `manage.py runworker magi-engine` processes.

Every model is the suite's fake OpenAI-compatible server answering after --latency
seconds (L). All judgements are submitted at once through the login-protected form (as
many browsers would), then the database is polled until each has ended. A judgement
cannot take less than 3·L (three rounds of concurrent calls); the report gives completed,
errors, and the p50/p95 of each judgement's wall time (created -> finished), in seconds
and as a multiple of 3·L.
"""

import argparse
import contextlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from http.cookiejar import CookieJar
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "magi_site.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only")

from tests.support.llm_server import FakeLLM  # noqa: E402
from tests.support.matching import csrf_token  # noqa: E402

MODELS = ("model-a", "model-b", "model-c")
FINISHED = ("approved", "rejected", "error")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def env_for(llm: FakeLLM, var_dir: Path, database_url: str = "", redis_url: str = "") -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAGI_", "OPENAI_"))}
    env.update(
        SECRET_KEY="benchmark-only",
        MAGI_VAR_DIR=str(var_dir),
        MAGI_DEFAULT_BASE_URL=llm.base_url,
        MAGI_DEFAULT_API_KEY="bench",
        MAGI_MODELS=",".join(MODELS),
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    for name, value in (("DATABASE_URL", database_url), ("REDIS_URL", redis_url)):
        if value:
            env[name] = value
        else:
            env.pop(name, None)
    return env


def manage(env: dict, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout


class Site:
    def __init__(self, host: str) -> None:
        self.host = host
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def wait_up(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"http://{self.host}/healthz", timeout=1),
            ):
                return
            time.sleep(0.1)
        raise RuntimeError("the web process did not come up")

    def token(self, path: str) -> str:
        page = self.opener.open(f"http://{self.host}{path}", timeout=30).read().decode()
        return csrf_token(page)

    def login(self, username: str, password: str) -> None:
        url = f"http://{self.host}/accounts/login/"
        data = {"username": username, "password": password}
        data["csrfmiddlewaretoken"] = self.token("/accounts/login/")
        request = urllib.request.Request(
            url, data=urllib.parse.urlencode(data).encode(), headers={"Referer": url}
        )
        self.opener.open(request, timeout=30).read()
        if not any(c.name == "sessionid" for c in self.jar):
            raise RuntimeError("login failed")

    def submit(self, number: int, token: str) -> bool:
        from judgements.intake.cases import FormInitial, posted_fields

        case: FormInitial = {
            "title": f"Load {number}",
            "content": f"Case {number}: I am going to travel to Japan next week.",
            "agents": [
                {"name": name, "model": model, "criteria": f"{name} approves only safe plans."}
                for name, model in zip(("Melchior", "Balthasar", "Casper"), MODELS, strict=True)
            ],
        }
        data = {**posted_fields(case), "csrfmiddlewaretoken": token}
        url = f"http://{self.host}/"
        request = urllib.request.Request(
            url, data=urllib.parse.urlencode(data).encode(), headers={"Referer": url}
        )
        try:
            with self.opener.open(request, timeout=120) as response:
                return "/judgements/" in response.geturl()
        except OSError as exc:
            print(f"submission {number} failed: {exc}", file=sys.stderr)
            return False


def parse_time(value) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace(" ", "T"))


def rows_sqlite(path: Path) -> list[tuple]:
    with contextlib.closing(sqlite3.connect(path, timeout=30)) as conn:
        return conn.execute(
            "SELECT status, created_at, finished_at, error_message FROM judgements_judgement"
        ).fetchall()


def rows_postgres(url: str) -> list[tuple]:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(
            "SELECT status, created_at, finished_at, error_message FROM judgements_judgement"
        ).fetchall()


def drive(site: Site, count: int, read_rows, latency: float, timeout: float) -> dict:
    token = site.token("/")
    began = time.monotonic()
    with ThreadPoolExecutor(max_workers=64) as pool:
        submitted = list(pool.map(lambda n: site.submit(n, token), range(count)))
    submit_seconds = time.monotonic() - began
    deadline = time.monotonic() + timeout
    while True:
        rows = read_rows()
        done = [r for r in rows if r[0] in FINISHED]
        if len(done) >= sum(submitted) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    makespan = time.monotonic() - began
    walls = sorted(
        (parse_time(r[2]) - parse_time(r[1])).total_seconds() for r in rows if r[0] in FINISHED
    )
    floor = 3 * latency

    def pct(p: float) -> float:
        return walls[min(len(walls) - 1, round(p * (len(walls) - 1)))] if walls else 0.0

    errors = [r for r in rows if r[0] == "error"]
    return {
        "judgements": count,
        "submitted": sum(submitted),
        "submit_failures": count - sum(submitted),
        "completed": sum(1 for r in rows if r[0] in ("approved", "rejected")),
        "errors": len(errors),
        "unfinished": len(rows) - len(done),
        "error_samples": sorted({r[3] for r in errors})[:3],
        "latency_s": latency,
        "floor_3L_s": floor,
        "wall_p50_s": round(pct(0.50), 3),
        "wall_p95_s": round(pct(0.95), 3),
        "wall_max_s": round(walls[-1], 3) if walls else 0.0,
        "wall_mean_s": round(statistics.fmean(walls), 3) if walls else 0.0,
        "p50_over_3L": round(pct(0.50) / floor, 2),
        "p95_over_3L": round(pct(0.95) / floor, 2),
        "submit_s": round(submit_seconds, 2),
        "makespan_s": round(makespan, 2),
    }


def start_web(env: dict, log_dir: Path) -> tuple[subprocess.Popen, Site]:
    port = free_port()
    web = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
         "magi_site.asgi:application"],
        cwd=REPO, env=env, stdout=open(log_dir / "web.log", "ab"), stderr=subprocess.STDOUT,  # noqa: SIM115
    )  # fmt: skip
    site = Site(f"127.0.0.1:{port}")
    site.wait_up()
    return web, site


def admin_login(env: dict, var_dir: Path, site: Site) -> None:
    manage(env, "ensure_admin")
    site.login("admin", (var_dir / "admin-password.txt").read_text().strip())


def run_embedded(llm: FakeLLM, count: int, latency: float, timeout: float) -> dict:
    var_dir = Path(tempfile.mkdtemp(prefix="magi-bench-"))
    env = env_for(llm, var_dir)
    manage(env, "migrate", "--noinput")
    web, site = start_web(env, var_dir)
    try:
        admin_login(env, var_dir, site)
        result = drive(site, count, lambda: rows_sqlite(var_dir / "db.sqlite3"), latency, timeout)
    finally:
        web.kill()
    result["setup"] = "embedded: daphne + SQLite + in-memory layer + in-process engine"
    result["logs"] = str(var_dir)
    return result


def run_scaled(llm: FakeLLM, count: int, latency: float, workers: int, timeout: float) -> dict:
    from tests.support.services import Postgres, Redis

    var_dir = Path(tempfile.mkdtemp(prefix="magi-bench-"))
    postgres = Postgres().init()
    redis = Redis().start()
    processes = []
    try:
        postgres.admin("CREATE DATABASE magi")
        url = postgres.url("magi")
        env = env_for(llm, var_dir, database_url=url, redis_url=redis.url)
        manage(env, "migrate", "--noinput")
        for n in range(workers):
            processes.append(
                subprocess.Popen(
                    [sys.executable, "manage.py", "runworker", "magi-engine"],
                    cwd=REPO,
                    env=env,
                    stdout=open(var_dir / f"worker-{n}.log", "ab"),  # noqa: SIM115
                    stderr=subprocess.STDOUT,
                )
            )
        web, site = start_web(env, var_dir)
        processes.append(web)
        admin_login(env, var_dir, site)
        result = drive(site, count, lambda: rows_postgres(url), latency, timeout)
    finally:
        for process in processes:
            process.kill()
        redis.stop()
        postgres.destroy()
    result["setup"] = f"scaled: daphne + {workers} engine workers + PostgreSQL + Redis"
    result["logs"] = str(var_dir)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["embedded", "scaled", "both"], default="both")
    parser.add_argument("-n", "--count", type=int, help="judgements (200 embedded, 1000 scaled)")
    parser.add_argument("--latency", type=float, default=0.2, help="model answer delay, s")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    import django

    django.setup()  # for the form layout the web page expects (judgements.forms)

    llm = FakeLLM().start()
    for model in MODELS:
        llm.script(model, delay=args.latency)
    results = []
    try:
        if args.mode in ("embedded", "both"):
            results.append(run_embedded(llm, args.count or 200, args.latency, args.timeout))
            print(json.dumps(results[-1], indent=2), flush=True)
        if args.mode in ("scaled", "both"):
            results.append(
                run_scaled(llm, args.count or 1000, args.latency, args.workers, args.timeout)
            )
            print(json.dumps(results[-1], indent=2), flush=True)
    finally:
        llm.stop()
    print(f"LLM calls in flight at most: {llm.max_in_flight}")
    if any(r["errors"] or r["unfinished"] or r["submit_failures"] for r in results):
        sys.exit(1)


if __name__ == "__main__":
    main()
