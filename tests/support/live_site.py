"""A live MAGI for browser tests and the push-latency benchmark.

`LiveMagi` migrates a fresh SQLite database in its own directory, creates users and runs
daphne on 127.0.0.1 (the embedded default: in-memory channel layer, engine in the web
process), pointed at the suite's fake OpenAI-compatible server, whose gate parks each
(model, round) call until the test lets it through, so every intermediate state of a
deliberation can be observed on the page deterministically.
"""

import contextlib
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playwright.sync_api import expect, sync_playwright

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PASSWORD = "correct horse battery staple"
MODELS = ("model-a", "model-b", "model-c", "model-d")
# Prepared var directories and their users' sessions, by the secret key and users they
# were made with: the migrations and the users depend on no MAGI_ setting (LiveMagi.prepare).
PREPARED: dict[tuple, tuple[Path, dict[str, str]]] = {}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Users share one password hash (hashing is slow by design) and each gets a logged-in
# session, so a test can start logged in without paying for a password check.
CREATE_USERS = f"""
import json
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth.hashers import make_password
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
User = get_user_model()
password = make_password({PASSWORD!r})
users = User.objects.bulk_create([User(username=name, password=password) for name in %r])
sessions = {{}}
for user in User.objects.filter(username__in=[u.username for u in users]):
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    # As django.contrib.auth.login records it: the backend that signed the user in.
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    sessions[user.username] = session.session_key
print(json.dumps(sessions))
"""


class LiveMagi:
    """daphne serving MAGI on a fresh database, the engine inside the same process."""

    def __init__(self, var_dir: Path, llm_base_url: str, *, users: int = 0, **env) -> None:
        self.var_dir = Path(var_dir)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.var_dir / "daphne.log"
        self.db_path = self.var_dir / "db.sqlite3"
        self.usernames = [f"user{i:02d}" for i in range(1, users + 1)]
        self.env = self._environment(llm_base_url, env)
        self.process: subprocess.Popen | None = None
        self.django: subprocess.Popen[str] | None = None  # the long-lived one of command()
        self.sessions: dict[str, str] = {}  # username -> session key of a logged-in session
        # API tokens of the first users, for the tests that issue them (manage api_token).
        self.token = ""
        self.other_token = ""

    def _environment(self, llm_base_url: str, extra: dict) -> dict:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("MAGI_", "OPENAI_")) and k not in {"DATABASE_URL", "REDIS_URL"}
        }
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "magi_site.settings",
                "SECRET_KEY": "browser-test-secret-key-not-for-production",
                "DEBUG": "",
                "MAGI_VAR_DIR": str(self.var_dir),
                "MAGI_DEFAULT_BASE_URL": llm_base_url,
                "MAGI_DEFAULT_API_KEY": "test",
                "MAGI_MODELS": ",".join(MODELS),
                "MAGI_LLM_RETRY_INITIAL_WAIT": "0.01",
                "MAGI_LLM_RETRY_MAX_WAIT": "0.02",
                "MAGI_LLM_MAX_ATTEMPTS": "2",
                "MAGI_LLM_TIMEOUT": "90",
                # As in tests/conftest.py: a test that wants the calls beside the vote
                # turns them on through `env`.
                "MAGI_CONFIDENCE_PROBE": "false",
                "MAGI_SECOND_OPINION": "false",
                "MAGI_INJECTION_SCREEN": "false",
                # An evaluation run's plain call (evaluations/plain_call.py) asks a model
                # of its own, so a test that scripts an agent's calls scripts its votes.
                "MAGI_CHECK_MODEL": "model-check",
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update({k: str(v) for k, v in extra.items()})
        return env

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if result.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stderr}")
        return result.stdout

    def command(self, *args: str) -> str:
        """`manage.py ARGS` run in this site's long-lived Django process
        (tests/support/django_process.py), started on first use: its output, or
        RuntimeError with the error it raised, as manage() gives."""
        if self.django is None or self.django.poll() is not None:
            self.var_dir.mkdir(parents=True, exist_ok=True)
            with (self.var_dir / "django_process.log").open("ab") as log:
                self.django = subprocess.Popen(
                    [sys.executable, "-m", "tests.support.django_process"],
                    cwd=REPO,
                    env=self.env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=log,
                    text=True,
                )
        assert self.django.stdin is not None and self.django.stdout is not None
        self.django.stdin.write(json.dumps(list(args)) + "\n")
        self.django.stdin.flush()
        # As manage()'s: a command that hangs fails the test instead of stalling the suite.
        ready, _, _ = select.select([self.django.stdout], [], [], 120)
        answer = self.django.stdout.readline() if ready else ""
        if not answer:
            said = (self.var_dir / "django_process.log").read_text(errors="replace")
            self.django.kill()
            raise RuntimeError(f"manage.py {' '.join(args)}: no answer from Django:\n{said}")
        done = json.loads(answer)
        if not done["ok"]:
            raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done['stderr']}")
        return str(done["stdout"])

    def shell(self, code: str) -> str:
        """`manage.py shell -c CODE` in the long-lived Django process: what it printed."""
        return self.command("shell", "-v", "0", "-c", code)

    def start(self, ready_within: float = 30.0) -> "LiveMagi":
        self.var_dir.mkdir(parents=True, exist_ok=True)
        self.prepare()
        return self.serve(ready_within)

    def prepare(self) -> None:
        """A migrated database with the users and their sessions: made once per test
        process, secret key and users, then copied (making it takes seconds: two Django
        processes; copying it, milliseconds). Any other database is made in place."""
        key = (self.env["SECRET_KEY"], *self.usernames)
        on_sqlite = "DATABASE_URL" not in self.env
        if on_sqlite and key in PREPARED:
            prepared, sessions = PREPARED[key]
            self.sessions = dict(sessions)
            shutil.copytree(prepared, self.var_dir, dirs_exist_ok=True)
            return
        self.manage("migrate", "--no-input", "-v", "0")
        if self.usernames:
            output = self.manage("shell", "-v", "0", "-c", CREATE_USERS % (self.usernames,))
            self.sessions = json.loads(output.strip().splitlines()[-1])
        if on_sqlite:
            # Beside the var directory: in pytest's temporary tree, which pytest prunes.
            prepared = Path(tempfile.mkdtemp(prefix="prepared-", dir=self.var_dir.parent))
            shutil.copytree(self.var_dir, prepared, dirs_exist_ok=True)
            PREPARED[key] = (prepared, dict(self.sessions))

    def crash(self) -> None:
        """SIGKILL the server: no clean shutdown, the engine inside it dies mid-call."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def serve(self, ready_within: float = 30.0) -> "LiveMagi":
        """Start daphne on this instance's port and database, and wait until it answers."""
        daphne = Path(sys.executable).with_name("daphne")
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    str(daphne),
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "magi_site.asgi:application",
                ],
                cwd=REPO,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        wait_until_serving(
            self.process, f"{self.url}/healthz", ready_within, "daphne", self.stop, self.log
        )
        return self

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except FileNotFoundError:
            return ""

    def stop(self) -> None:
        if self.django is not None and self.django.poll() is None:
            self.django.stdin.close()  # type: ignore[union-attr]  # its loop ends: it exits
            self.django.wait(timeout=10)
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


@contextlib.contextmanager
def chromium():
    """Debian's Chromium, headless, driven by Playwright."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


# --- page helpers ----------------------------------------------------------------------


def log_in(page, username: str, password: str = PASSWORD) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def fill_judgement(page, title: str, content: str, agents: list[tuple[str, str, str]]) -> None:
    """Fill the new-judgement form; agents are (name, model, criteria)."""
    page.get_by_label("Title").fill(title)
    page.get_by_label("Content").fill(content)
    for number, (name, model, criteria) in enumerate(agents, start=1):
        group = page.get_by_role("group", name=f"Agent {number}")
        group.get_by_label("Name").fill(name)
        group.get_by_label("Model").select_option(model)
        group.get_by_label("Criteria").fill(criteria)


def expect_agents_filled(page, agents: list[tuple[str, str, str]]) -> None:
    """The three agent fieldsets hold these (name, model, criteria)."""
    for number, (name, model, criteria) in enumerate(agents, start=1):
        group = page.get_by_role("group", name=f"Agent {number}")
        expect(group.get_by_label("Name")).to_have_value(name)
        expect(group.get_by_label("Model")).to_have_value(model)
        expect(group.get_by_label("Criteria")).to_have_value(criteria)


def submit_judgement(page, title: str, content: str, agents: list[tuple[str, str, str]]) -> int:
    """Start a judgement through the form; return its id once the live page is shown."""
    page.goto("/")
    fill_judgement(page, title, content, agents)
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")
    return int(page.url.rstrip("/").rsplit("/", 1)[1])


# Theme colours of the box states (CSS custom properties in static/magi.css).
STATE_COLOURS = {
    "pending": "--pending",
    "approve": "--approve",
    "reject": "--reject",
    "error": "--error",
}

THEME_COLOUR_JS = """(name) => {
  const probe = document.createElement("span");
  probe.style.color = `var(${name})`;
  document.body.append(probe);
  const colour = getComputedStyle(probe).color;
  probe.remove();
  return colour;
}"""


def theme_colour(page, name: str) -> str:
    """A CSS custom property of the page's theme as the browser computes it: rgb(r, g, b)."""
    return page.evaluate(THEME_COLOUR_JS, name)


def rgb(colour: str) -> tuple[int, int, int]:
    r, g, b = (int(float(x)) for x in colour[colour.index("(") + 1 : -1].split(",")[:3])
    return r, g, b


def hue_name(colour: str) -> str:
    """Roughly what a person would call the colour: green, red, yellow or other."""
    r, g, b = rgb(colour)
    if g > r + 40 and g > b + 40:
        return "green"
    if r > 150 and g > 150 and b < min(r, g) - 80:
        return "yellow"
    if r > g + 80 and r > b + 80:
        return "red"
    return "other"


# The lowest WCAG contrast ratio of any text in a box against the box's own background.
CONTRAST_JS = """(box) => {
  const channels = (colour) => colour.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const luminance = (colour) => {
    const [r, g, b] = channels(colour).map((v) => {
      const c = v / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  // A live update may swap the box out between finding it and measuring it.
  if (!box.isConnected) return null;
  const background = getComputedStyle(box).backgroundColor;
  let worst = {ratio: Infinity, text: null};
  const texts = box.querySelectorAll(
    ".agent-name, .agent-state, .agent-model, .agent-history .round,"
    + " .agent-history strong, .agent-history .reason");
  for (const el of texts) {
    const r = ratio(getComputedStyle(el).color, background);
    if (r < worst.ratio) worst = {ratio: r, text: el.className || el.textContent, background};
  }
  return worst;
}"""


def lowest_contrast(locator, timeout: float = 5.0) -> dict:
    """The worst text contrast in a box, measured on the box that is in the page now."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        worst = locator.evaluate(CONTRAST_JS)
        if worst is not None:
            return worst
    raise AssertionError("the box kept being replaced while its contrast was measured")


def wait_until_serving(
    process: "subprocess.Popen[Any]",
    url: str,
    ready_within: float,
    what: str,
    stop: Callable[[], None],
    log: Callable[[], str],
) -> None:
    """Poll `url` until it answers 200. Fail with `what` and its log when its process exits,
    or, after `stop()`, when it is not ready within `ready_within` seconds."""
    deadline = time.monotonic() + ready_within
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}:\n{log()}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            stop()
            raise RuntimeError(f"{what} not ready within {ready_within} s:\n{log()}")
        time.sleep(0.05)  # polling interval of a bounded readiness check
