"""Fixtures of the security catalogue."""

import io
import json
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.management import call_command
from django.test import Client

from judgements.intake.cases import case_to_form_data
from judgements.models import ApiToken
from tests.browser.live import LiveMagi
from tests.durability.conftest import database, postgres  # noqa: F401  (fixtures)

# These servers run no judgement: nothing listens here.
UNUSED_LLM = "http://127.0.0.1:9/v1"


# --- Web hardening (websocket, headers, HTTPS): a real daphne per module ---------------


@pytest.fixture(scope="module")
def live_site(tmp_path_factory):
    """daphne serving MAGI over plain HTTP, one user logged in (live_site.sessions)."""
    site = LiveMagi(tmp_path_factory.mktemp("live-site"), UNUSED_LLM, users=1).start()
    yield site
    site.stop()


@pytest.fixture(scope="module")
def https_site(tmp_path_factory):
    """daphne as it runs behind a TLS proxy: MAGI_HTTPS=1."""
    site = LiveMagi(tmp_path_factory.mktemp("https-site"), UNUSED_LLM, MAGI_HTTPS="1").start()
    yield site
    site.stop()


# --- Hostile input: one case through every entry point that takes it ----------------------
# The page's form, the HTTP API and `manage.py judge` each get the same case; a test says
# what each must answer. Every entry point runs in this process against the test database,
# except where the database itself matters (test_input_postgres.py).


REPO = Path(__file__).resolve().parents[2]


@dataclass
class Answer:
    """What an entry point answered: HTTP status or exit code, and the text it showed."""

    status: int
    text: str
    errors: dict | None = None  # the API's {"errors": {field: [messages]}}


def form_data(case: dict) -> dict[str, str]:
    """The page's POST fields for a case (its unknown fields left out: the form has none)."""
    known = {k: v for k, v in case.items() if k in ("title", "content", "agents")}
    if isinstance(known.get("agents"), list):
        known["agents"] = [
            {k: v for k, v in a.items() if k in ("name", "model", "criteria")}
            for a in known["agents"]
        ]
    return case_to_form_data(known)


class EntryPoints:
    def __init__(self, user, tmp_path: Path) -> None:
        self.user = user
        self.tmp_path = tmp_path
        self.key = ApiToken.issue(user, "security tests")[1]
        self.page = Client()
        self.page.force_login(user)
        self.api_client = Client()

    def form(self, case: dict) -> Answer:
        response = self.page.post("/", form_data(case))
        return Answer(response.status_code, response.content.decode())

    def form_body(self, body: bytes) -> Answer:
        """POST raw URL-encoded bytes to the page, as a misbehaving browser might."""
        response = self.page.post("/", body, content_type="application/x-www-form-urlencoded")
        return Answer(response.status_code, response.content.decode())

    def api(self, case) -> Answer:
        body = case if isinstance(case, bytes) else json.dumps(case).encode()
        return self.api_body(body)

    def api_body(self, body: bytes, path: str = "/api/judgements/") -> Answer:
        response = self.api_client.post(
            path, body, content_type="application/json", headers=self.auth
        )
        return api_answer(response)

    @property
    def auth(self) -> dict:
        return {"Authorization": f"Bearer {self.key}"}

    def cli(self, case) -> Answer:
        """`manage.py judge FILE` in this process; case is a JSON value or raw bytes."""
        path = self.tmp_path / "case.json"
        path.write_bytes(case if isinstance(case, bytes) else json.dumps(case).encode())
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command("judge", str(path), stdout=out, stderr=err)
            code = 0
        except SystemExit as exited:
            code = exited.code
        return Answer(code, out.getvalue() + err.getvalue())


def api_answer(response) -> Answer:
    assert response["Content-Type"] == "application/json", response.content[:300]
    body = response.json()
    return Answer(response.status_code, json.dumps(body), body.get("errors"))


def run_judge_process(args: list[str], stdin: bytes = b"", env: dict | None = None) -> Answer:
    """`manage.py judge` as a real process, for standard input and other databases."""
    result = subprocess.run(
        [sys.executable, "manage.py", "judge", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        timeout=120,
        env=env,
    )
    return Answer(result.returncode, (result.stdout + result.stderr).decode("utf-8", "replace"))


@pytest.fixture
def entry(fake_llm, user, tmp_path) -> EntryPoints:
    yield EntryPoints(user, tmp_path)
    # The wake-ups of the judgements stored here: a later test's worker must not get them.
    async_to_sync(get_channel_layer().flush)()


def html_id(path: str) -> str:
    """The page's id for a field the API names by path: agents[1].name -> id_agents-1-name."""
    return "id_" + path.replace("[", "-").replace("].", "-")


def urlencode_bytes(fields: dict[str, bytes | str]) -> bytes:
    """URL-encode field values given as raw bytes (or text, sent as UTF-8)."""
    return "&".join(
        f"{urllib.parse.quote_plus(name)}="
        + urllib.parse.quote_plus(value if isinstance(value, bytes) else value.encode())
        for name, value in fields.items()
    ).encode()
