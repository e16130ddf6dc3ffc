"""How many judgements a user and an API token may start, and how many a user may have
unfinished: 429 with Retry-After from the API, a message on the page that keeps what was
typed, and limits that hold across web processes (issue 9, item 14)."""

import json
import secrets
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from judgements.models import ApiToken, Judgement, Status
from tests.support.cases import case_for
from tests.support.inputs import UNUSED_LLM, api_answer, page_fields
from tests.support.live_site import LiveMagi
from tests.support.services import ALIAS, Processes
from tests.support.states import bring

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def limits(settings):
    """Every limit off; a test turns on the one it checks."""
    settings.MAGI_RATE_WINDOW_SECONDS = 60
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_RATE_LIMIT_PER_TOKEN = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    return settings


def post_api(entry, key: str | None = None):
    headers = {"Authorization": f"Bearer {key}"} if key else entry.auth
    return api_answer(
        entry.api_client.post(
            "/api/judgements/", json.dumps(case_for()), "application/json", headers=headers
        )
    )


def test_the_page_refuses_over_the_per_user_limit_and_keeps_the_text(entry, limits):
    limits.MAGI_RATE_LIMIT_PER_USER = 3
    for _ in range(3):
        assert entry.form(case_for()).status == 302
    response = entry.page.post("/", page_fields(case_for(title="Fourth")))
    html = response.content.decode()
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    assert "You have started 3 judgements in the last 60 seconds" in html
    assert 'value="Fourth"' in html and "Melchior approves only safe plans." in html
    assert Judgement.objects.count() == 3


def test_the_per_user_limit_counts_every_entry_point(entry, limits):
    limits.MAGI_RATE_LIMIT_PER_USER = 3
    assert entry.form(case_for()).status == 302
    assert entry.api(case_for()).status == 201
    assert entry.form(case_for()).status == 302
    refused = post_api(entry)
    assert refused.status == 429
    body = json.loads(refused.text)
    assert "You have started 3 judgements" in body["error"]
    assert 1 <= body["retry_after"] <= 60
    assert Judgement.objects.count() == 3


def test_another_user_is_not_limited_by_mine(entry, limits, other_user):
    limits.MAGI_RATE_LIMIT_PER_USER = 1
    assert post_api(entry).status == 201
    assert post_api(entry).status == 429
    other_key = ApiToken.issue(other_user, "other")[1]
    assert post_api(entry, other_key).status == 201


def test_each_token_has_its_own_limit(entry, limits):
    limits.MAGI_RATE_LIMIT_PER_TOKEN = 2
    second_key = ApiToken.issue(entry.user, "second")[1]
    assert [post_api(entry).status for _ in range(3)] == [201, 201, 429]
    refused = post_api(entry)
    assert "This API token has started 2 judgements" in json.loads(refused.text)["error"]
    assert [post_api(entry, second_key).status for _ in range(3)] == [201, 201, 429]
    # The page is not held to a token's limit.
    assert entry.form(case_for()).status == 302
    assert Judgement.objects.filter(api_token__isnull=False).count() == 4


def test_retry_after_is_when_a_place_frees_up(entry, limits):
    limits.MAGI_RATE_LIMIT_PER_USER = 2
    assert [post_api(entry).status for _ in range(2)] == [201, 201]
    oldest, newest = Judgement.objects.order_by("created_at")
    now = timezone.now()
    Judgement.objects.filter(pk=oldest.pk).update(created_at=now - timedelta(seconds=50))
    Judgement.objects.filter(pk=newest.pk).update(created_at=now - timedelta(seconds=20))
    response = entry.api_client.post(
        "/api/judgements/", json.dumps(case_for()), "application/json", headers=entry.auth
    )
    assert response.status_code == 429
    assert 8 <= int(response["Retry-After"]) <= 10  # the oldest leaves the window in ~10 s
    Judgement.objects.filter(pk=oldest.pk).update(created_at=now - timedelta(seconds=61))
    assert post_api(entry).status == 201


def test_unfinished_judgements_are_capped(entry, limits):
    limits.MAGI_UNFINISHED_PER_USER = 2
    assert [post_api(entry).status for _ in range(2)] == [201, 201]
    refused = post_api(entry)
    assert refused.status == 429 and "2 judgements not finished yet" in refused.text
    assert entry.form(case_for()).status == 429
    for status in (Status.JUDGING, Status.APPROVED):
        bring(Judgement.objects.filter(pk=Judgement.objects.all()[0].pk), status)
        expected = 429 if status == Status.JUDGING else 201
        assert post_api(entry).status == expected


def test_a_limit_of_zero_is_no_limit(entry, limits):
    assert {post_api(entry).status for _ in range(12)} == {201}


def test_the_defaults_limit_a_burst(entry):
    statuses = [post_api(entry).status for _ in range(25)]
    assert statuses.count(201) == 20 and statuses[20:] == [429] * 5


# --- several web processes on one database --------------------------------------------------


def burst(urls: list[str], key: str, count: int) -> list[int]:
    """count API creations at once, spread over the given servers; their statuses."""
    body = json.dumps(case_for()).encode()

    def send(number: int) -> int:
        request = urllib.request.Request(
            f"{urls[number % len(urls)]}/api/judgements/",
            data=body,
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code

    with ThreadPoolExecutor(max_workers=count) as pool:
        return list(pool.map(send, range(count)))


LIMITED = {
    "MAGI_RATE_LIMIT_PER_TOKEN": "5",
    "MAGI_RATE_LIMIT_PER_USER": "100",
    "MAGI_UNFINISHED_PER_USER": "0",
}


def test_the_limit_holds_across_two_web_processes_on_sqlite(tmp_path):
    first = LiveMagi(tmp_path, UNUSED_LLM, users=1, **LIMITED).start()
    second = LiveMagi(tmp_path, UNUSED_LLM, users=0, **LIMITED)  # the first made the users
    try:
        second.serve()
        key = first.manage("api_token", first.usernames[0]).strip()
        statuses = burst([first.url, second.url], key, 24)
    finally:
        first.stop()
        second.stop()
    assert sorted(statuses) == [201] * 5 + [429] * 19


def test_the_limit_holds_across_two_web_processes_on_postgresql(database, llm_server, tmp_path):
    user = get_user_model().objects.db_manager(ALIAS).create_user("burst", password="x" * 12)
    key = "magi_" + secrets.token_urlsafe(32)
    ApiToken.objects.using(ALIAS).create(
        user=user, name="burst", prefix=key[5:13], key_hash=ApiToken.hash(key)
    )
    procs = Processes(database, "", UNUSED_LLM, tmp_path)
    procs.env.update(LIMITED)
    try:
        webs = [procs.web("web-1"), procs.web("web-2")]
        statuses = burst([f"http://{web.host}" for web in webs], key, 24)
    finally:
        procs.stop_all()
    assert sorted(statuses) == [201] * 5 + [429] * 19
    assert Judgement.objects.using(ALIAS).count() == 5
