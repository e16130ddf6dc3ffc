"""Webhook delivery survives a dead worker and restarted servers: real PostgreSQL, Redis
and worker processes.

The receiver holds the first POST until the test has SIGKILLed the worker that sent it
(or restarted PostgreSQL and Redis under it); the delivery is taken over once its lease
(the one every background job uses, judgements/models/leases.py) expires and delivered
once more, with the same webhook-id and a valid signature: at least once, never lost, one
copy more at most, which the signed id lets a receiver drop.
"""

import json

import pytest
from django.contrib.auth import get_user_model
from django.db import OperationalError, connections

from judgements.models import DeliveryStatus, Judgement, WebhookDelivery, WebhookSecret
from judgements.outcome.webhooks import IN_FLIGHT
from tests.support.services import ALIAS, create_judgement, wait_for, wake
from tests.support.webhook_receiver import Receiver, signature_verifies

WORKER_ENV = {
    "MAGI_WEBHOOK_HOSTS": "http://127.0.0.1",
    # Longer than the lease (MAGI_LEASE_SECONDS, 2 s in these tests): the worker keeps its
    # lease renewed while it waits on the receiver.
    "MAGI_WEBHOOK_TIMEOUT": "5",
    "MAGI_WEBHOOK_RETRY_INITIAL_WAIT": "0",
}


@pytest.fixture
def receiver():
    server = Receiver(hold_first=True)
    yield server
    server.stop()


def delivery_of(judgement_id: int) -> WebhookDelivery:
    """The judgement's one delivery (it has one callback URL)."""
    return WebhookDelivery.objects.using(ALIAS).get(judgement_id=judgement_id)


def status_of(judgement_id: int) -> str | None:
    """The delivery's status, or None while this test's connection has not come back
    from the restart."""
    try:
        return delivery_of(judgement_id).status
    except OperationalError:
        connections[ALIAS].close()
        return None


def test_a_delivery_whose_worker_is_killed_is_delivered_by_another(processes, fake_llm, receiver):
    user = get_user_model().objects.db_manager(ALIAS).create(username="deploy-bot")
    secret = WebhookSecret.new_secret()
    WebhookSecret.objects.using(ALIAS).create(user=user, secret=secret)
    judgement = create_judgement(creator=user)
    Judgement.objects.using(ALIAS).filter(pk=judgement.pk).update(callback_url=receiver.url)

    first = processes.worker("first", **WORKER_ENV)
    # The first worker's sweeper finds the judgement, judges it, and posts the webhook,
    # which the receiver holds.
    assert receiver.first_arrived.wait(timeout=90), first.log()
    first.kill()
    held = delivery_of(judgement.pk)
    assert held.status == DeliveryStatus.PENDING
    assert held.lease_owner  # the dead worker still holds it
    assert list(held.attempts.values_list("status_code", "error")) == [(None, IN_FLIGHT)]
    receiver.gate.set()  # answering the dead worker's request changes nothing

    second = processes.worker("second", **WORKER_ENV)
    wait_for(
        lambda: delivery_of(judgement.pk).status == DeliveryStatus.DELIVERED,
        90,
        f"the second worker to deliver the webhook:\n{second.log()[-3000:]}",
    )
    delivered = delivery_of(judgement.pk)
    assert list(delivered.attempts.values_list("number", "status_code")) == [(1, None), (2, 200)]
    assert delivered.attempts.get(number=2).worker != held.lease_owner
    assert len(receiver.received) == 2
    assert {r["headers"]["webhook-id"] for r in receiver.received} == {delivered.webhook_id}
    assert all(signature_verifies(secret, r) for r in receiver.received)
    payload = json.loads(receiver.received[1]["body"])
    assert (payload["event"], payload["id"]) == ("judgement.finished", judgement.pk)
    assert payload["status"] == Judgement.objects.using(ALIAS).get(pk=judgement.pk).status


def test_a_delivery_in_flight_while_postgres_and_redis_restart_is_delivered_once_more(
    processes, fake_llm, receiver, postgres, redis_server, redis_url
):
    """The POST got through but its outcome could not be stored (the database went away):
    the delivery stays pending under a lease nobody renews, and is posted once more after
    the restart, when that lease has run out."""
    user = get_user_model().objects.db_manager(ALIAS).create(username="deploy-bot")
    secret = WebhookSecret.new_secret()
    WebhookSecret.objects.using(ALIAS).create(user=user, secret=secret)
    judgement = create_judgement(creator=user)
    Judgement.objects.using(ALIAS).filter(pk=judgement.pk).update(callback_url=receiver.url)
    worker = processes.worker(**WORKER_ENV)
    wake(redis_url, judgement.pk)
    assert receiver.first_arrived.wait(timeout=90), worker.log()

    postgres.stop()
    redis_server.stop()
    receiver.gate.set()  # answered 200 while the worker cannot record it
    worker.wait_logged("webhook delivery failed", 30, "the worker to fail recording it")
    redis_server.start()
    postgres.start()

    wait_for(
        lambda: status_of(judgement.pk) == DeliveryStatus.DELIVERED,
        90,
        f"the worker to deliver the webhook again:\n{worker.log()[-3000:]}",
    )
    delivered = delivery_of(judgement.pk)
    assert list(delivered.attempts.values_list("number", "status_code")) == [(1, None), (2, 200)]
    assert len(receiver.received) == 2
    assert {r["headers"]["webhook-id"] for r in receiver.received} == {delivered.webhook_id}
    assert all(signature_verifies(secret, r) for r in receiver.received)
    assert worker.popen.poll() is None
