"""Webhook delivery survives a dead worker: real PostgreSQL, Redis and worker processes.

The receiver holds the first POST until the test has SIGKILLed the worker that sent it;
another worker takes the delivery over once its lease expires and delivers it, with the
same webhook-id and a valid signature.
"""

import json

import pytest
from django.contrib.auth import get_user_model

from judgements.models import DeliveryStatus, Judgement, WebhookDelivery, WebhookSecret
from judgements.outcome.webhooks import IN_FLIGHT
from tests.support.services import ALIAS, create_judgement, wait_for
from tests.support.webhook_receiver import Receiver, signature_verifies

WORKER_ENV = {
    "MAGI_WEBHOOK_HOSTS": "http://127.0.0.1",
    # The delivery lease is this plus MAGI_LEASE_SECONDS (2 s in these tests).
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
