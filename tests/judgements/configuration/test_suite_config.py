"""configuration/suite_config.py: every way to make, change and delete a suite writes its
audit row through `made` / `audit_state` (the page, the API, `manage.py suite import`,
`manage.py evaluate`'s suite from a file, `manage.py load_examples`, `manage.py team
assign`, the admin's delete), so `manage.py audit verify` compares each suite with the
log: its cases edited, renamed or deleted behind MAGI's back is named, on SQLite."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.urls import reverse

from judgements.evaluations import suites
from judgements.management import evaluation_input
from judgements.models import Suite
from tests.support import live_state
from tests.support.live_state import assert_clean, changed, gone, sql

pytestmark = pytest.mark.django_db(transaction=True)

CASES = "".join(
    json.dumps({"id": f"c{n}", "content": f"Deploy step {n}.", "expected": "reject"}) + "\n"
    for n in (1, 2)
)


@pytest.fixture
def configured(fake_llm):
    return live_state.configured()


def by_page(configured, client, tmp_path: Path) -> Suite:
    client.force_login(configured.maker)
    form = {"name": "Smoke", "description": "", "jsonl_text": CASES}
    assert client.post(reverse("suite-list"), form).status_code == 302
    return Suite.objects.get(name="Smoke")


def by_api(configured, client, tmp_path: Path) -> Suite:
    api = live_state.api_client(configured.maker, configured.team)
    answer = async_to_sync(api.post)("/api/suites/?name=Smoke", CASES, "application/jsonl")
    assert answer.status_code == 201, answer.content
    return Suite.objects.get(name="Smoke")


def by_suite_command(configured, client, tmp_path: Path) -> Suite:
    (tmp_path / "smoke.jsonl").write_text(CASES)
    with pytest.raises(SystemExit) as exited:
        call_command("suite", "import", str(tmp_path / "smoke.jsonl"), "--name", "Smoke")
    assert exited.value.code == 0
    return Suite.objects.get(name="Smoke")


def by_evaluate(configured, client, tmp_path: Path) -> Suite:
    """`manage.py evaluate FILE.jsonl` stores the file as a suite named after it first."""
    path = tmp_path / "Smoke.jsonl"
    path.write_text(CASES)
    data = path.read_bytes()
    return evaluation_input.suite_for(path, data, suites.parse_jsonl(data))


def by_load_examples(configured, client, tmp_path: Path) -> Suite:
    call_command("load_examples", verbosity=0)
    return Suite.objects.filter(owner=None).order_by("pk").first() or Suite()


WAYS: list[Callable[..., Suite]] = [by_page, by_api, by_suite_command, by_evaluate]


@pytest.mark.parametrize("made", [*WAYS, by_load_examples], ids=lambda way: way.__name__)
def test_a_suite_made_any_way_is_audited_and_its_cases_edited_are_named(
    configured, client, tmp_path, made
):
    suite = made(configured, client, tmp_path)
    assert_clean()
    sql("UPDATE judgements_suitecase SET expected = 'approve' WHERE suite_id = %s", suite.pk)
    live_state.assert_named(changed("suite", suite.pk, "Suite"))


def test_a_suite_renamed_behind_magis_back_is_named(configured, client, tmp_path):
    suite = by_api(configured, client, tmp_path)
    assert_clean()
    sql("UPDATE judgements_suite SET name = 'Harmless' WHERE id = %s", suite.pk)
    live_state.assert_named(changed("suite", suite.pk, "Suite"))


def test_a_suite_deleted_behind_magis_back_is_named(configured, client, tmp_path):
    suite = by_api(configured, client, tmp_path)
    assert_clean()
    sql("DELETE FROM judgements_suitecase WHERE suite_id = %s", suite.pk)
    sql("DELETE FROM judgements_suite WHERE id = %s", suite.pk)
    live_state.assert_named(gone("suite", suite.pk, "Suite"))


def test_a_suite_replaced_and_deleted_through_the_api_checks_clean(configured, client, tmp_path):
    suite = by_api(configured, client, tmp_path)
    api = live_state.api_client(configured.maker, configured.team)
    one = f"/api/suites/{suite.pk}/"
    renamed = async_to_sync(api.put)(
        f"/api/suites/{suite.pk}.jsonl?name=Smoke+2",
        CASES,
        "application/jsonl",
        headers={"If-Match": "*"},
    )
    assert renamed.status_code == 200, renamed.content
    assert_clean()
    assert async_to_sync(api.delete)(one, headers={"If-Match": "*"}).status_code == 204
    assert_clean()


def test_a_suite_given_to_a_team_with_the_command_checks_clean(configured, client, tmp_path):
    suite = by_suite_command(configured, client, tmp_path)
    with pytest.raises(SystemExit) as exited:
        call_command("team", "assign", "Payments", "--suite", str(suite.pk))
    assert exited.value.code == 0
    assert Suite.objects.get(pk=suite.pk).team == configured.team
    assert_clean()


def test_a_suite_is_deleted_in_the_admin_audited_and_never_changed_there(
    configured, client, admin_client, tmp_path
):
    suite = by_page(configured, client, tmp_path)
    change = reverse("admin:judgements_suite_change", args=[suite.pk])
    form = {"team": configured.other.pk, "version": 9}
    admin_client.post(change, form)
    assert Suite.objects.get(pk=suite.pk).team_id is None
    delete = reverse("admin:judgements_suite_delete", args=[suite.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 302
    assert not Suite.objects.filter(pk=suite.pk).exists()
    assert_clean()


def test_a_team_deleted_through_the_api_leaves_its_suite_audited(configured, client, tmp_path):
    suite = by_api(configured, client, tmp_path)
    staff = live_state.api_client(configured.staff)
    gone_team = async_to_sync(staff.delete)(
        f"/api/teams/{configured.team.pk}/", headers={"If-Match": "*"}
    )
    assert gone_team.status_code == 204
    assert Suite.objects.get(pk=suite.pk).team is None
    assert_clean()
