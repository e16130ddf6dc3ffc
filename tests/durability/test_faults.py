"""No judgement is lost when a process, Redis or the database goes away.

Every test runs real processes (`manage.py runworker magi-engine`, daphne) against a real
PostgreSQL and Redis (see conftest.py) and the suite's fake OpenAI-compatible server, and
waits by polling the database with a deadline.
"""

import json
import urllib.error
import urllib.request
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.utils import timezone

from judgements.models import ApiToken, Judgement, Status
from tests.support.services import (
    ALIAS,
    MODELS,
    PageClient,
    create_judgement,
    decisions,
    finished,
    load,
    wait_for,
    wake,
)

ALL_CALLS = [(model, rnd) for model in MODELS for rnd in (1, 2, 3)]


def calls_for(fake_llm, content: str | None = None) -> dict[tuple[str, int], int]:
    """How often the LLM server was asked each (model, round), for one judgement's content."""
    counts: dict[tuple[str, int], int] = {}
    with fake_llm.lock:
        requests = list(fake_llm.requests)
    for request in requests:
        if content is None or content in json.dumps(request.body):
            key = (request.model, request.round)
            counts[key] = counts.get(key, 0) + 1
    return counts


def loaded(judgement_id: int) -> Judgement:
    """The judgement as stored now, the database being up."""
    judgement = load(judgement_id)
    assert judgement is not None, "the database is unreachable"
    return judgement


def holder_of(judgement_id: int, workers):
    """The worker process whose lease is on the judgement, as the database says."""
    owner = loaded(judgement_id).lease_owner
    holders = [w for w in workers if f":{w.pid}:" in owner]
    assert len(holders) == 1, f"lease owner {owner!r} is none of {[w.pid for w in workers]}"
    return holders[0]


def test_it_resumes_after_a_worker_is_killed(processes, fake_llm, redis_url):
    gate = fake_llm.gate
    gate.close()
    workers = [processes.worker("first"), processes.worker("second")]
    judgement = create_judgement()
    wake(redis_url, judgement.pk)
    for model in MODELS:
        gate.allow(model, 1)
    gate.allow("model-a", 2)
    # Mid-round 2: Melchior's decision is stored, Balthasar's and Casper's are in flight,
    # held at the gate until their worker is gone.
    gate.wait_parked(("model-b", 2), ("model-c", 2), timeout=30)
    wait_for(lambda: ("model-a", 2) in decisions(judgement.pk), 30, "Melchior's round 2")
    assert len(decisions(judgement.pk)) == 4
    holder = holder_of(judgement.pk, workers)
    holder.kill()
    gate.open()

    done = wait_for(lambda: finished(judgement.pk), 40, "the judgement to finish")
    assert done.status == Status.APPROVED, done.error_message
    assert decisions(judgement.pk) == sorted(ALL_CALLS)
    # What was decided before the kill was never asked again; only the two calls that
    # died with the holder were asked a second time, by the other worker.
    asked_twice = {("model-b", 2), ("model-c", 2)}
    assert calls_for(fake_llm) == {call: 2 if call in asked_twice else 1 for call in ALL_CALLS}
    survivor = next(w for w in workers if w is not holder)
    assert survivor.popen.poll() is None
    moved = f"judgement {judgement.pk}: judging -> approved by worker "
    survivor.wait_logged(moved, 10, "the survivor to log the verdict")


def test_it_runs_each_call_once_when_two_workers_race(processes, fake_llm, redis_url):
    for model in MODELS:
        fake_llm.script(model, delay=0.2)
    # The race is at the claim. A lease long enough that a holder starved of the CPU (the
    # suite's two sessions on two cores) still renews it, so no call is asked again
    # because a lease ran out: that takeover is by design (test_it_resumes_after_...).
    processes.worker("one", MAGI_LEASE_SECONDS=30)
    processes.worker("two", MAGI_LEASE_SECONDS=30)
    contents = [f"Case {n}: I am going to travel to Japan next week." for n in range(8)]
    judgements = [create_judgement(content) for content in contents]
    for judgement in judgements:
        wake(redis_url, judgement.pk)  # two wake-ups each: both workers try to claim
        wake(redis_url, judgement.pk)

    for judgement in judgements:
        done = wait_for(lambda j=judgement: finished(j.pk), 60, f"judgement {judgement.pk}")
        assert done.status == Status.APPROVED, done.error_message
        assert decisions(judgement.pk) == sorted(ALL_CALLS)
    for content in contents:
        assert calls_for(fake_llm, content) == dict.fromkeys(ALL_CALLS, 1), content
    assert len(fake_llm.requests) == 9 * len(contents)


def test_it_finishes_and_pages_resync_after_redis_restarts(
    processes, fake_llm, redis_url, redis_server
):
    gate = fake_llm.gate
    gate.close()
    for model in MODELS:
        gate.allow(model, 1)  # round 2 waits until Redis is down
    web = processes.web()
    processes.worker()
    # Hashed the way the web process (not this test run) checks passwords.
    password = PBKDF2PasswordHasher().encode("pw-ada-123", PBKDF2PasswordHasher().salt())
    user = get_user_model().objects.db_manager(ALIAS).create(username="ada", password=password)
    cookie = web.login("ada", "pw-ada-123")
    judgement = create_judgement(creator=user)
    wake(redis_url, judgement.pk)
    page = PageClient(
        f"ws://{web.host}/ws/judgements/{judgement.pk}/",
        {"Cookie": cookie, "Origin": f"http://{web.host}"},
    ).start()
    try:
        wait_for(lambda: page.messages, 20, "the page to receive the judgement's state")
        wait_for(lambda: len(decisions(judgement.pk)) >= 3, 20, "round 1 to be decided")
        connection_before = page.connections

        redis_server.stop()
        # Submitted while Redis is away: no wake-up can reach a worker.
        queued = create_judgement(content="Submitted while Redis is down.", creator=user)
        stored = len(decisions(judgement.pk))
        for model in MODELS:
            gate.allow(model, 2)
        wait_for(
            lambda: len(decisions(judgement.pk)) > stored,
            20,
            "the worker to go on deciding while Redis is down",
        )
        redis_server.start()
        gate.open()

        for each in (judgement, queued):
            done = wait_for(lambda j=each: finished(j.pk), 40, f"judgement {each.pk} to finish")
            assert done.status == Status.APPROVED, done.error_message
            assert decisions(each.pk) == sorted(ALL_CALLS)
        # The page lost its socket with Redis, reconnected, and was brought up to date.
        wait_for(
            lambda: page.status_seen("approved", after_connection=connection_before),
            20,
            "the reconnected page to show the final state",
        )
        assert page.connections > connection_before
    finally:
        page.stop()


def test_it_rides_out_a_database_outage(processes, fake_llm, redis_url, postgres):
    gate = fake_llm.gate
    gate.close()
    for model in MODELS:
        gate.allow(model, 1)
    worker = processes.worker()
    judgement = create_judgement()
    wake(redis_url, judgement.pk)
    # Round 2's calls are in flight, held at the gate.
    gate.wait_parked(*((model, 2) for model in MODELS), timeout=20)
    assert len(fake_llm.requests) == 6 and len(decisions(judgement.pk)) == 3

    postgres.stop()
    gate.open()  # the answers arrive while the database is away
    worker.wait_logged("retrying", 20, "the worker to retry its database writes")
    postgres.start()

    done = wait_for(lambda: finished(judgement.pk), 60, "the judgement to finish")
    assert done.status == Status.APPROVED, done.error_message
    assert decisions(judgement.pk) == sorted(ALL_CALLS)
    assert calls_for(fake_llm) == dict.fromkeys(ALL_CALLS, 1)
    assert worker.popen.poll() is None


def test_it_ends_in_error_when_a_judgement_cannot_finish_in_time(processes, fake_llm, redis_url):
    fake_llm.hold()  # the models never answer
    processes.worker(MAGI_JUDGEMENT_TIMEOUT=3)
    judgement = create_judgement()
    wake(redis_url, judgement.pk)

    done = wait_for(lambda: finished(judgement.pk), 20, "the judgement to end")
    assert done.status == Status.ERROR
    assert done.error_message == (
        "Judgement did not finish within 3 s of its start (given up in round 1)"
    )
    assert done.error_round == 1
    assert done.lease_owner == ""


def test_it_gives_up_on_a_judgement_whose_worker_died_past_its_deadline(
    processes, fake_llm, redis_url
):
    fake_llm.hold()
    first = processes.worker("first", MAGI_JUDGEMENT_TIMEOUT=4)
    judgement = create_judgement()
    wake(redis_url, judgement.pk)
    wait_for(lambda: len(fake_llm.requests) == 3, 20, "round 1's calls to be in flight")
    owner = loaded(judgement.pk).lease_owner
    first.kill()
    # Nobody holds it and its time is up: resuming it now could not finish in time.
    held = loaded(judgement.pk)
    started, expires = held.started_at, held.lease_expires_at
    assert started is not None and expires is not None  # claimed: round 1 is in flight
    wait_for(
        lambda: timezone.now() > started + timedelta(seconds=4) and timezone.now() > expires,
        20,
        "the deadline to pass",
    )
    processes.worker("second", MAGI_JUDGEMENT_TIMEOUT=4)

    done = wait_for(lambda: finished(judgement.pk), 20, "the judgement to end")
    assert done.status == Status.ERROR
    assert done.error_message == (
        "Judgement did not finish within 4 s of its start (given up in round 1): "
        f"worker {owner} stopped renewing its lease"
    )
    assert len(fake_llm.requests) == 3  # not resumed: nothing asked again


def api_call(web, method: str, path: str, key: str, body: dict | None = None):
    request = urllib.request.Request(
        f"http://{web.host}{path}",
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=90) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def test_the_api_waits_on_the_database_while_redis_is_down(
    processes, fake_llm, redis_url, redis_server
):
    web = processes.web()
    processes.worker()
    user = get_user_model().objects.db_manager(ALIAS).create(username="bot")
    key = "magi_redis-outage-test-key"
    ApiToken.objects.db_manager(ALIAS).create(
        user=user, name="bot", prefix=key[5:13], key_hash=ApiToken.hash(key)
    )
    case = {
        "title": "Trip",
        "content": "I am going to travel to Japan next week.",
        "agents": [
            {"name": name, "model": model, "criteria": "Approve safe plans."}
            for name, model in zip(("Melchior", "Balthasar", "Casper"), MODELS, strict=True)
        ],
    }
    redis_server.stop()
    try:
        # No wake-up and no event can travel: the worker finds the judgement by sweeping,
        # and the waiting request reads the outcome from the database.
        status, created = api_call(web, "POST", "/api/judgements/?wait=60", key, case)
        assert status == 201, created
        assert created["status"] == "approved"
        status, read = api_call(web, "GET", f"/api/judgements/{created['id']}/?wait=5", key)
        assert (status, read["status"]) == (200, "approved")
    finally:
        redis_server.start()
    assert decisions(created["id"]) == sorted(ALL_CALLS)
