"""Fixtures of the security catalogue."""

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.management import call_command
from django.test import Client

from judgements.models import ApiToken
from tests.support.inputs import UNUSED_LLM, Answer, api_answer, page_fields
from tests.support.live_site import LiveMagi
from tests.support.services import database, postgres  # noqa: F401  (fixtures)

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


class EntryPoints:
    def __init__(self, user, tmp_path: Path) -> None:
        self.user = user
        self.tmp_path = tmp_path
        self.key = ApiToken.issue(user, "security tests")[1]
        self.page = Client()
        self.page.force_login(user)
        self.api_client = Client()

    def form(self, case: dict) -> Answer:
        response = self.page.post("/", page_fields(case))
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
            assert isinstance(exited.code, int), exited.code  # judge exits with a status
            code = exited.code
        return Answer(code, out.getvalue() + err.getvalue())


@pytest.fixture
def entry(fake_llm, user, tmp_path) -> Iterator[EntryPoints]:
    yield EntryPoints(user, tmp_path)
    # The wake-ups of the judgements stored here: a later test's worker must not get them.
    async_to_sync(get_channel_layer().flush)()
