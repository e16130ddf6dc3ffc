"""Real servers for the tests that need them: PostgreSQL, Redis, MAGI's own web and worker
processes, and the database as those tests see it."""

import asyncio
import contextlib
import glob
import http.cookiejar
import itertools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import dj_database_url
import psycopg
import pytest
import redis
from django.conf import settings
from django.db import OperationalError, connections, transaction

from judgements.core.text import name_key
from judgements.models import Agent, Judgement, RoundDecision
from tests.support.matching import csrf_token

REPO = Path(__file__).resolve().parents[2]


MODELS = ("model-a", "model-b", "model-c")


ALIAS = "durable"


PG_USER = "magi"


TEMPLATE_DB = "magi_template"


_database_numbers = itertools.count(1)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, timeout: float, what: str, interval: float = 0.05):
    """Poll until predicate() is truthy; fail naming what never happened."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(f"{name} not found: apt-get install postgresql")
    return path


class Postgres:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="magi-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "postgres.log"
        self.port = free_port()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.dir, "postgres", "postgres")

    def _run(self, *args: str) -> None:
        command = list(args)
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args)} failed:\n{result.stderr}\n{log[-2000:]}")

    def init(self) -> "Postgres":
        self._run(
            pg_bin("initdb"), "-D", str(self.data), "-U", PG_USER, "--auth=trust",
            "-E", "UTF8", "--no-sync",
        )  # fmt: skip
        with open(self.data / "postgresql.conf", "a") as conf:
            conf.write(
                f"port = {self.port}\nlisten_addresses = '127.0.0.1'\n"
                f"unix_socket_directories = '{self.dir}'\nfsync = off\n"
                "synchronous_commit = off\nfull_page_writes = off\nmax_connections = 300\n"
            )
        self.start()
        return self

    def start(self) -> None:
        self._run(pg_bin("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "start")

    def stop(self) -> None:
        self._run(pg_bin("pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgres://{PG_USER}@127.0.0.1:{self.port}/{database}"

    def admin(self, sql: str) -> None:
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(sql)

    def copy(self, template: str = TEMPLATE_DB) -> str:
        """A new database copied from `template` (PostgreSQL copies its files: a second or
        less, where building its contents again may take many): its name."""
        name = f"magi_test_{os.getpid()}_{next(_database_numbers)}"
        self.admin(f"CREATE DATABASE {name} TEMPLATE {template}")
        return name

    def drop(self, name: str) -> None:
        with contextlib.suppress(Exception):
            self.admin(f"DROP DATABASE {name} WITH (FORCE)")

    @contextlib.contextmanager
    def template(self, build: Callable[[str], None], source: str = TEMPLATE_DB) -> Iterator[str]:
        """A database built once by `build(url)` on a copy of `source` (the migrated one),
        then closed to connections, so that every copy of it starts from it exactly as
        built: no test can change it, however it tampers with its own copy. Its name, for
        copy() and copied_database()."""
        name = self.copy(source)
        try:
            build(self.url(name))
            self.admin(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS false")
            yield name
        finally:
            self.drop(name)


@pytest.fixture(scope="session")
def postgres():
    server = Postgres().init()
    try:
        server.admin(f"CREATE DATABASE {TEMPLATE_DB}")
        env = base_env(database_url=server.url(TEMPLATE_DB), redis_url="")
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert migrate.returncode == 0, migrate.stderr
        yield server
    finally:
        server.destroy()


@contextlib.contextmanager
def copied_database(postgres: Postgres, django_db_blocker, template: str) -> Iterator[str]:
    """A fresh copy of `template` for one test, reachable in the test as ALIAS: its URL."""
    name = postgres.copy(template)
    url = postgres.url(name)
    configured = connections.configure_settings(
        {"default": connections.settings["default"], ALIAS: dj_database_url.parse(url)}
    )
    connections.settings[ALIAS] = configured[ALIAS]
    try:
        with django_db_blocker.unblock():
            yield url
            connections[ALIAS].close()
    finally:
        del connections[ALIAS]
        del connections.settings[ALIAS]
        postgres.drop(name)


@pytest.fixture
def database(postgres, django_db_blocker):
    """A fresh, migrated database for this test, reachable in the test as ALIAS."""
    with copied_database(postgres, django_db_blocker, TEMPLATE_DB) as url:
        yield url


class Redis:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="magi-redis-"))
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "Redis":
        self.process = subprocess.Popen(
            [
                shutil.which("redis-server") or "redis-server",
                "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                "--appendonly", "no", "--dir", str(self.dir),
            ],
            stdout=open(self.dir / "redis.log", "ab"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        wait_for(self.ping, 10, "redis-server to answer")
        return self

    def ping(self) -> bool:
        try:
            return redis.Redis(port=self.port, socket_timeout=0.5).ping()
        except redis.RedisError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def flush(self) -> None:
        redis.Redis(port=self.port).flushall()


def base_env(database_url: str, redis_url: str, llm_url: str = "http://127.0.0.1:9/v1") -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MAGI_", "OPENAI_", "DJANGO_")) and k not in ("PYTEST_CURRENT_TEST",)
    }
    env.update(
        DATABASE_URL=database_url,
        REDIS_URL=redis_url,
        SECRET_KEY=settings.SECRET_KEY,
        MAGI_DEFAULT_BASE_URL=llm_url,
        MAGI_DEFAULT_API_KEY="test-key",
        MAGI_MODELS=",".join(MODELS),
        MAGI_DEFAULT_TIMEOUT="30",
        MAGI_LLM_RETRY_INITIAL_WAIT="0.01",
        MAGI_LLM_RETRY_MAX_WAIT="0.05",
        MAGI_LEASE_SECONDS="2",
        MAGI_SWEEP_INTERVAL="0.5",
        MAGI_DB_RETRY_SECONDS="30",
        MAGI_CONFIDENCE_PROBE="false",
        MAGI_SECOND_OPINION="false",
        MAGI_INJECTION_SCREEN="false",
        PYTHONUNBUFFERED="1",
        LOG_LEVEL="INFO",
    )
    if not redis_url:
        env.pop("REDIS_URL")
    return env


class Process:
    def __init__(self, name: str, command: list[str], env: dict, log_dir: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self.popen = subprocess.Popen(
            command,
            cwd=REPO,
            env=env,
            stdout=open(self.log_path, "ab"),  # noqa: SIM115
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return self.popen.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_logged(self, line: str, timeout: float, what: str) -> None:
        """Wait until the process has written `line`. A worker logs a change after it has
        stored it, so a test that saw the stored change waits for the line rather than
        racing it. A timeout names `what`, with the end of the log as it was then."""
        try:
            wait_for(lambda: line in self.log(), timeout, what)
        except AssertionError as exc:
            raise AssertionError(f"{exc}:\n{self.log()[-3000:]}") from None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
            self.popen.wait(timeout=20)


class Processes:
    """Start workers and a web server against this test's database and Redis."""

    def __init__(self, database_url: str, redis_url: str, llm_url: str, log_dir: Path):
        self.env = base_env(database_url, redis_url, llm_url)
        self.log_dir = log_dir
        self.started: list[Process] = []

    def worker(self, name: str = "worker", **extra_env) -> Process:
        env = {**self.env, **{k: str(v) for k, v in extra_env.items()}}
        command = [sys.executable, "manage.py", "runworker", settings.MAGI_ENGINE_CHANNEL]
        process = Process(name, command, env, self.log_dir)
        self.started.append(process)
        wait_for(
            lambda: "engine worker" in process.log() or process.popen.poll() is not None,
            30,
            f"{name} to start",
        )
        assert process.popen.poll() is None, process.log()
        return process

    def web(self, name: str = "web") -> "Web":
        port = free_port()
        command = [
            sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
            "magi_site.asgi:application",
        ]  # fmt: skip
        process = Process(name, command, self.env, self.log_dir)
        self.started.append(process)
        web = Web(process, f"127.0.0.1:{port}")
        wait_for(web.healthy, 30, f"{name} to answer /healthz")
        return web

    def stop_all(self) -> None:
        for process in self.started:
            with contextlib.suppress(Exception):
                process.kill(signal.SIGKILL)


class Web:
    def __init__(self, process: Process, host: str) -> None:
        self.process = process
        self.host = host

    def healthy(self) -> bool:
        if self.process.popen.poll() is not None:
            raise AssertionError(f"web process exited:\n{self.process.log()}")
        try:
            with urllib.request.urlopen(f"http://{self.host}/healthz", timeout=1) as response:
                return response.status == 200
        except OSError:
            return False

    def login(self, username: str, password: str) -> str:
        """Log in through the real login form; returns the Cookie header for the session."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        url = f"http://{self.host}/accounts/login/"
        page = opener.open(url, timeout=10).read().decode()
        token = csrf_token(page)
        data = urllib.parse.urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token}
        ).encode()
        request = urllib.request.Request(url, data=data, headers={"Referer": url})
        answer = opener.open(request, timeout=10).read().decode()
        cookies = {c.name: c.value for c in jar}
        assert "sessionid" in cookies, f"login failed:\n{answer[-1500:]}"
        return "; ".join(f"{k}={v}" for k, v in cookies.items())


def create_judgement(content: str = "I am going to travel to Japan next week.", creator=None):
    """A queued judgement, stored the way the web page stores one."""
    with transaction.atomic(using=ALIAS):
        judgement = Judgement.objects.using(ALIAS).create(
            title="Trip to Japan", content=content, creator=creator
        )
        Agent.objects.using(ALIAS).bulk_create(
            Agent(
                judgement=judgement,
                position=position,
                name=name,
                name_key=name_key(name),
                model=model,
                criteria=f"{name} approves only safe plans.",
            )
            for position, (name, model) in enumerate(
                zip(("Melchior", "Balthasar", "Casper"), MODELS, strict=True), start=1
            )
        )
    return judgement


def load(judgement_id: int) -> Judgement | None:
    """The judgement as stored now, or None while the database is unreachable."""
    try:
        return Judgement.objects.using(ALIAS).get(pk=judgement_id)
    except OperationalError:
        connections[ALIAS].close()
        return None


def decisions(judgement_id: int) -> list[tuple[str, int]]:
    try:
        return list(
            RoundDecision.objects.using(ALIAS)
            .filter(agent__judgement_id=judgement_id)
            .order_by("agent__position", "round")
            .values_list("agent__model", "round")
        )
    except OperationalError:
        connections[ALIAS].close()
        return []


def finished(judgement_id: int) -> Judgement | None:
    judgement = load(judgement_id)
    return judgement if judgement is not None and judgement.is_finished else None


def wake(redis_url: str, judgement_id: int) -> None:
    """What the web page does after storing a judgement: one wake-up on the engine channel."""
    from channels_redis.core import RedisChannelLayer

    async def send() -> None:
        layer = RedisChannelLayer(hosts=[redis_url])
        await layer.send(
            settings.MAGI_ENGINE_CHANNEL, {"type": "judgement.run", "judgement_id": judgement_id}
        )
        await layer.close_pools()

    asyncio.run(send())


class PageClient:
    """A live page's websocket, in its own thread: reconnects whenever the server drops it
    (as the page's htmx ws extension does) and keeps every message it receives."""

    def __init__(self, url: str, headers: dict) -> None:
        self.url = url
        self.headers = headers
        self.messages: list[tuple[int, str]] = []  # (connection number, text)
        self.connections = 0
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=lambda: asyncio.run(self._run()), daemon=True)

    def start(self) -> "PageClient":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(timeout=10)

    async def _run(self) -> None:
        import websockets

        while not self.stopping.is_set():
            try:
                async with websockets.connect(
                    self.url, additional_headers=self.headers, open_timeout=5
                ) as socket_:
                    with self.lock:
                        self.connections += 1
                        number = self.connections
                    while not self.stopping.is_set():
                        try:
                            text = await asyncio.wait_for(socket_.recv(), timeout=0.2)
                        except TimeoutError:
                            continue
                        if isinstance(text, bytes):  # the live page sends text frames
                            text = text.decode()
                        with self.lock:
                            self.messages.append((number, text))
            except Exception:  # dropped, refused while the server's layer is away: retry
                await asyncio.sleep(0.2)

    def status_seen(self, status: str, after_connection: int = 0) -> bool:
        marker = f'data-status="{status}"'
        with self.lock:
            return any(n > after_connection and marker in t for n, t in self.messages)
