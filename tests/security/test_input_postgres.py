"""Where the database matters: names and lone surrogates on PostgreSQL, through a real web
process (API and page) and `manage.py judge` (issue 9, items 1 and 5), and migration 0003
on agents stored before it."""

import http.client
import json
import secrets
import urllib.parse

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import IntegrityError, connections, transaction

from judgements.core import text
from judgements.models import Agent, ApiToken, Judgement
from tests.support.cases import case_for
from tests.support.inputs import page_fields, run_judge_process
from tests.support.matching import csrf_token
from tests.support.services import ALIAS, MODELS, Processes, base_env

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "correct horse battery staple"
SAME = [("\u0130nci", "\u0130NCI"), ("Mel\u200bchior", "MELCHIOR"), ("Stra\u00dfe", "STRASSE")]
DIFFERENT = [("\u0130nci", "inci"), ("\u0130nci", "\u0131nci"), ("Ana", "Anna")]
SURROGATE_FIELDS = ["title", "content", "agents[1].name", "agents[2].criteria"]


def agents_named(first: str, second: str, title: str) -> dict:
    case = case_for(title=title)
    case["agents"][0]["name"], case["agents"][1]["name"] = first, second
    return case


def with_surrogate(path: str) -> dict:
    case = case_for()
    if path.startswith("agents["):
        case["agents"][int(path[7])][path.split(".")[1]] = "T\ud800"
    else:
        case[path] = "T\udc00"
    return case


class Site:
    """A daphne on this test's PostgreSQL database, reached as a browser and a client."""

    def __init__(self, web, key: str) -> None:
        self.web = web
        self.key = key
        self.cookie = web.login("pg", PASSWORD)

    def request(self, method: str, path: str, body: bytes = b"", headers=None):
        connection = http.client.HTTPConnection(self.web.host, timeout=30)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read().decode()

    def api(self, case: dict) -> tuple[int, dict]:
        headers = {"Authorization": f"Bearer {self.key}", "Content-Type": "application/json"}
        status, body = self.request("POST", "/api/judgements/", json.dumps(case).encode(), headers)
        return status, json.loads(body)

    def form(self, case: dict) -> tuple[int, str]:
        _, page = self.request("GET", "/", headers={"Cookie": self.cookie})
        token = csrf_token(page)
        body = urllib.parse.urlencode({**page_fields(case), "csrfmiddlewaretoken": token})
        headers = {
            "Cookie": self.cookie,
            "Content-Type": "application/x-www-form-urlencoded",
            "Referer": f"http://{self.web.host}/",
        }
        return self.request("POST", "/", body.encode(), headers)


@pytest.fixture
def site(database, llm_server, tmp_path, settings):
    # The web process checks the password with its own hashers, not the suite's fast one.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    llm_server.reset()
    for model in MODELS:
        llm_server.script(model)
    user = get_user_model().objects.db_manager(ALIAS).create_user("pg", password=PASSWORD)
    key = "magi_" + secrets.token_urlsafe(32)
    ApiToken.objects.using(ALIAS).create(
        user=user, name="pg", prefix=key[5:13], key_hash=ApiToken.hash(key)
    )
    procs = Processes(database, "", llm_server.base_url, tmp_path)
    try:
        yield Site(procs.web(), key)
    finally:
        procs.stop_all()


def stored_names(title: str) -> list[str]:
    agents = Agent.objects.using(ALIAS).filter(judgement__title=title).order_by("position")
    return list(agents.values_list("name", flat=True))


def test_names_on_postgresql_through_the_api_and_the_page(site):
    for number, (first, second) in enumerate(SAME):
        status, body = site.api(agents_named(first, second, f"same {number}"))
        # Schema-valid names that read the same: a rule the schema cannot express (422).
        assert status == 422 and list(body["errors"]) == ["agents[1].name"], body
        status, html = site.form(agents_named(first, second, f"same page {number}"))
        assert status == 400 and 'id="id_agents-1-name_error"' in html
    for number, (first, second) in enumerate(DIFFERENT):
        status, body = site.api(agents_named(first, second, f"different {number}"))
        assert status == 201, body
        assert stored_names(f"different {number}")[:2] == [first, second]
        status, _ = site.form(agents_named(first, second, f"different page {number}"))
        assert status == 302
        assert stored_names(f"different page {number}")[:2] == [first, second]


def test_lone_surrogates_on_postgresql_through_the_api(site):
    for path in SURROGATE_FIELDS:
        status, body = site.api(with_surrogate(path))
        assert status == 422 and list(body["errors"]) == [path], body
    assert Judgement.objects.using(ALIAS).count() == 0


def test_the_command_line_on_postgresql(database, llm_server, tmp_path):
    llm_server.reset()
    for model in MODELS:
        llm_server.script(model)
    env = base_env(database, "", llm_server.base_url)
    path = tmp_path / "case.json"
    for case, expected in [
        (agents_named("\u0130nci", "inci", "cli different"), 0),
        (agents_named("\u0130nci", "\u0130NCI", "cli same"), 2),
        (with_surrogate("agents[1].name"), 2),
        (with_surrogate("content"), 2),
    ]:
        path.write_text(json.dumps(case))
        answer = run_judge_process([str(path)], env=env)
        assert answer.status == expected, answer.text
        if expected == 2:
            assert "invalid input: " in answer.text and "Traceback" not in answer.text
    assert stored_names("cli different") == ["\u0130nci", "inci", "Casper"]
    assert Judgement.objects.using(ALIAS).count() == 1


def test_the_database_constraint_is_the_forms_comparison(database):
    judgement = Judgement.objects.using(ALIAS).create(title="t", content="c")

    def add(position: int, name: str) -> None:
        Agent.objects.using(ALIAS).create(
            judgement=judgement,
            position=position,
            name=name,
            name_key=text.name_key(name),
            model="m",
            criteria="c",
        )

    add(1, "\u0130nci")
    add(2, "inci")  # Lower() folded these together on PostgreSQL; the form does not
    with pytest.raises(IntegrityError), transaction.atomic(using=ALIAS):
        add(3, "\u0130NCI")


def test_migration_0003_keys_the_agents_already_stored(database):
    call_command("migrate", "judgements", "0002", database=ALIAS, verbosity=0)
    with connections[ALIAS].cursor() as cursor:
        cursor.execute(
            "INSERT INTO judgements_judgement (title, content, status, error_message, "
            "created_at, lease_owner) VALUES ('old', 'c', 'approved', '', now(), '') "
            "RETURNING id"
        )
        judgement_id = cursor.fetchone()[0]
        # Names the old Lower() constraint let through, which the new key takes as one.
        for position, name in enumerate(["Casper", "Cas\u200bper", "CASPER\u00ad"], start=1):
            cursor.execute(
                "INSERT INTO judgements_agent (judgement_id, position, name, model, criteria) "
                "VALUES (%s, %s, %s, 'm', 'c')",
                [judgement_id, position, name],
            )
    call_command("migrate", "judgements", "0003", database=ALIAS, verbosity=0)
    agents = list(Agent.objects.using(ALIAS).filter(judgement_id=judgement_id))
    assert [a.name for a in agents] == ["Casper", "Cas\u200bper", "CASPER\u00ad"]  # as typed
    assert agents[0].name_key == text.name_key("Casper")
    assert len({a.name_key for a in agents}) == 3
