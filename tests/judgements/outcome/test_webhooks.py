"""Signed webhooks (judgements/outcome/webhooks.py): a judgement submitted through the API with a
callback_url is POSTed, signed, to a real HTTP receiver on loopback when it ends or is
overridden; failed deliveries are retried and every attempt is stored."""

import base64
import io
import json
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.core.management import CommandError, call_command
from django.test import AsyncClient
from django.utils import timezone
from jsonschema import Draft202012Validator

from judgements.models import ApiToken, DeliveryStates, DeliveryStatus, Judgement, WebhookDelivery
from judgements.models.leases import expiry
from judgements.outcome import webhooks
from tests.support.api_client import TokenClient, serve_one_wake_up
from tests.support.cases import case_for
from tests.support.states import bring
from tests.support.webhooks import deliver, verify

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_engine_channel"),
]


async def submit(api, **fields) -> tuple[int, dict]:
    response = await api.post(
        "/api/judgements/", json.dumps(case_for(**fields)), content_type="application/json"
    )
    return response.status_code, response.json()


async def attempts_of(judgement_id: int) -> list[tuple[str, list]]:
    def read():
        return [
            (d.event, list(d.attempts.values_list("status_code", flat=True)))
            for d in WebhookDelivery.objects.filter(judgement_id=judgement_id).order_by("pk")
        ]

    return await sync_to_async(read)()


async def test_a_finished_judgement_is_posted_with_a_valid_signature(
    fake_llm, api, receiver, secret
):
    status, created = await submit(api, callback_url=receiver.url)
    assert status == 201, created
    assert await serve_one_wake_up()
    assert await deliver("w1", 10) == 1

    [request] = receiver.received
    payload = verify(secret, request)
    current = (await api.get(f"/api/judgements/{created['id']}/")).json()
    assert payload == {"event": "judgement.finished", **current}
    assert payload["status"] == "approved"
    assert payload["trust"] == "unmeasured"  # no certificate: the receiver is told so
    assert payload["trust_words"].startswith("Trust not measured for this panel")
    headers = request["headers"]
    delivery = await WebhookDelivery.objects.aget(judgement_id=created["id"])
    assert headers["webhook-id"] == f"msg_{delivery.pk}"
    assert delivery.status == DeliveryStatus.DELIVERED
    assert await attempts_of(created["id"]) == [("judgement.finished", [200])]
    # The body is what the OpenAPI document says a webhook carries.
    document = (await AsyncClient().get("/api/schema.json")).json()
    Draft202012Validator(
        {"$ref": "#/components/schemas/WebhookEvent", "components": document["components"]}
    ).validate(payload)
    assert await deliver("w1", 10) == 0  # delivered once, not again


async def test_a_receiver_failing_twice_is_retried_and_every_attempt_is_stored(
    fake_llm, api, receiver, secret
):
    receiver.answers = [500, 500, 200]
    _, created = await submit(api, callback_url=receiver.url)
    assert await serve_one_wake_up()
    for _ in range(3):
        assert await deliver("w1", 1) == 1

    assert await attempts_of(created["id"]) == [("judgement.finished", [500, 500, 200])]
    delivery = await WebhookDelivery.objects.aget(judgement_id=created["id"])
    assert (delivery.status, delivery.attempt_count) == (DeliveryStatus.DELIVERED, 3)
    ids = {r["headers"]["webhook-id"] for r in receiver.received}
    assert ids == {delivery.webhook_id}  # stable across retries
    for request in receiver.received:
        verify(secret, request)


async def test_it_backs_off_then_gives_up_after_the_last_attempt(
    fake_llm, api, receiver, secret, settings
):
    settings.MAGI_WEBHOOK_RETRY_INITIAL_WAIT = 60.0
    settings.MAGI_WEBHOOK_MAX_ATTEMPTS = 2
    receiver.answers = [503, 503, 503]
    _, created = await submit(api, callback_url=receiver.url)
    assert await serve_one_wake_up()
    assert await deliver("w1", 10) == 1
    delivery = await WebhookDelivery.objects.aget(judgement_id=created["id"])
    assert delivery.status == DeliveryStatus.PENDING
    assert delivery.next_attempt_at >= timezone.now() + timedelta(seconds=55)
    assert await deliver("w1", 10) == 0  # not due yet

    # Time passes (the row says when it is due).
    await WebhookDelivery.objects.filter(pk=delivery.pk).aupdate(next_attempt_at=timezone.now())
    assert await deliver("w1", 10) == 1
    await delivery.arefresh_from_db()
    assert delivery.status == DeliveryStatus.FAILED
    assert await attempts_of(created["id"]) == [("judgement.finished", [503, 503])]


async def test_an_error_judgements_webhook_says_error_never_approved(
    fake_llm, api, receiver, secret
):
    fake_llm.script("model-c", votes="AAA", failures={2: ["500"] * 10})
    _, created = await submit(api, callback_url=receiver.url)
    assert await serve_one_wake_up()
    assert await deliver("w1", 10) == 1

    payload = verify(secret, receiver.received[0])
    assert payload["event"] == "judgement.failed"
    assert (payload["status"], payload["panel_status"]) == ("error", "error")
    assert "Casper" in payload["error"]
    stored = await WebhookDelivery.objects.aget(judgement_id=created["id"])
    assert (stored.event, stored.payload["status"]) == ("judgement.failed", "error")


async def test_an_override_is_posted_with_the_verdict_in_force(
    fake_llm, api, receiver, secret, django_user_model
):
    fake_llm.script("model-a", votes="RRR")
    fake_llm.script("model-b", votes="RRR")
    _, created = await submit(api, callback_url=receiver.url)
    assert await serve_one_wake_up()
    staff = await django_user_model.objects.acreate(username="ops", is_staff=True)
    staff_api = TokenClient(f"Bearer {(await sync_to_async(ApiToken.issue)(staff, 't'))[1]}")
    response = await staff_api.post(
        f"/api/judgements/{created['id']}/override",
        json.dumps({"decision": "approve", "reason": "Checked by hand."}),
        content_type="application/json",
    )
    assert response.status_code == 201
    assert await deliver("w1", 10) == 2

    events = [verify(secret, r) for r in receiver.received]
    assert [(e["event"], e["status"], e["panel_status"]) for e in events] == [
        ("judgement.finished", "rejected", "rejected"),
        ("judgement.overridden", "approved", "rejected"),
    ]
    assert events[1]["override"]["by"] == "ops"


async def test_a_judgement_without_callback_url_stores_no_delivery(fake_llm, api, receiver):
    _, created = await submit(api)
    assert await serve_one_wake_up()
    assert await attempts_of(created["id"]) == []
    assert (await Judgement.objects.aget(pk=created["id"])).callback_url is None


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("https://evil.example.net/hook", 422),  # not on the list
        ("https://10.0.0.1/hook", 422),  # an internal address, not on the list
        ("http://hooks.example.com/hook", 422),  # listed for https only
        ("https://example.org/hook", 422),  # *.example.org is subdomains only
        ("https://user:pw@hooks.example.com/hook", 422),
        ("ftp://hooks.example.com/hook", 422),
        ("not a url", 422),
        (42, 400),  # not a string: the schema says so
    ],
)
async def test_a_refused_callback_url_is_named(fake_llm, api, receiver, secret, url, code):
    status, body = await submit(api, callback_url=url)
    assert status == code
    assert set(body["errors"]) == {"callback_url"}
    assert await Judgement.objects.acount() == 0


@pytest.mark.parametrize(
    "url", ["https://hooks.example.com/hook", "https://a.b.example.org/x", "http://127.0.0.1:1/"]
)
async def test_an_allowed_callback_url_is_stored(fake_llm, api, receiver, secret, url):
    status, body = await submit(api, callback_url=url)
    assert status == 201, body
    assert (await Judgement.objects.aget(pk=body["id"])).callback_url == url


async def test_a_schema_error_is_named_before_the_callback_urls_rule(
    fake_llm, api, receiver, secret
):
    # An empty title breaks the schema (400); the host allow-list is checked once the
    # body is as the schema describes it (422).
    status, body = await submit(api, title="", callback_url="https://evil.example.net/")
    assert (status, set(body["errors"])) == (400, {"title"})
    status, body = await submit(api, callback_url="https://evil.example.net/")
    assert (status, set(body["errors"])) == (422, {"callback_url"})


async def test_an_empty_allow_list_refuses_every_callback(
    fake_llm, api, receiver, secret, settings
):
    settings.MAGI_WEBHOOK_HOSTS = []
    status, body = await submit(api, callback_url=receiver.url)
    assert status == 422
    assert "MAGI_WEBHOOK_HOSTS" in body["errors"]["callback_url"][0]


async def test_a_callback_needs_a_webhook_secret(fake_llm, api, receiver, user):
    status, body = await submit(api, callback_url=receiver.url)
    assert status == 422
    assert "webhook_secret ada" in body["errors"]["callback_url"][0]


def test_the_secret_is_shown_once_and_rotates(user):
    first = io.StringIO()
    call_command("webhook_secret", "ada", stdout=first, stderr=io.StringIO())
    secret = first.getvalue().strip()
    assert secret.startswith("whsec_")
    assert len(base64.b64decode(secret.removeprefix("whsec_"))) == 32

    again = io.StringIO()
    with pytest.raises(CommandError, match="shown only once") as refused:
        call_command("webhook_secret", "ada", stdout=again, stderr=io.StringIO())
    assert refused.value.returncode == 2
    assert secret not in again.getvalue()

    rotated = io.StringIO()
    call_command("webhook_secret", "ada", "--rotate", stdout=rotated, stderr=io.StringIO())
    assert rotated.getvalue().strip().startswith("whsec_")
    assert rotated.getvalue().strip() != secret
    assert user.webhook_secret.secret == rotated.getvalue().strip()


def test_an_unknown_user_gets_exit_2(db):
    with pytest.raises(CommandError, match="no user") as refused:
        call_command("webhook_secret", "nobody", stdout=io.StringIO(), stderr=io.StringIO())
    assert refused.value.returncode == 2


def test_the_admin_shows_deliveries_and_attempts_read_only(admin_client, finished_delivery):
    page = admin_client.get(f"/admin/judgements/webhookdelivery/{finished_delivery.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "judgement.finished" in html and "503" in html
    assert 'name="_save"' not in html  # nothing to save: read-only
    assert admin_client.get("/admin/judgements/webhookdelivery/add/").status_code == 403
    deleting = f"/admin/judgements/webhookdelivery/{finished_delivery.pk}/delete/"
    assert admin_client.post(deleting, {"post": "yes"}).status_code == 403


@pytest.fixture
def finished_delivery(make_judgement, user, receiver, secret):
    """A delivery whose one attempt got a 503, through the real delivery path."""
    judgement = make_judgement(creator=user)
    Judgement.objects.filter(pk=judgement.pk).update(callback_url=receiver.url)
    receiver.answers = [503]
    delivery = webhooks.enqueue(judgement.pk, webhooks.FINISHED)
    assert webhooks.deliver_due("w1", 10) == 1
    return delivery


async def test_an_expired_judgement_is_posted_as_failed(
    fake_llm, api, receiver, secret, runner, settings
):
    _, created = await submit(api, callback_url=receiver.url)
    # Started long ago by a worker that is gone: the sweeper ends it in error.
    long_ago = timezone.now() - timedelta(seconds=settings.MAGI_JUDGEMENT_TIMEOUT + 60)
    await sync_to_async(bring)(
        Judgement.objects.filter(pk=created["id"]),
        "judging",
        started_at=long_ago,
        lease_owner="gone",
        lease_expires_at=long_ago,
    )
    await runner.run_single_cycle()
    assert await deliver("w1", 10) == 1

    payload = verify(secret, receiver.received[0])
    assert (payload["event"], payload["status"]) == ("judgement.failed", "error")
    assert "did not finish" in payload["error"]


def test_a_delivery_whose_worker_died_is_taken_over_once_its_lease_runs_out(
    make_judgement, user, receiver, secret
):
    """The lease every background job uses (models/leases.py): claimed, a delivery is
    nobody else's until one lease after its last renewal; then the next worker posts it,
    under the same signed webhook-id, and the dead worker's late ending changes nothing."""
    judgement = make_judgement(creator=user)
    Judgement.objects.filter(pk=judgement.pk).update(callback_url=receiver.url)
    webhooks.enqueue(judgement.pk, webhooks.FINISHED)
    claimed = webhooks.claim_one("dead")  # its worker is killed before it hears back
    assert claimed is not None
    delivery, first_attempt = claimed
    held = WebhookDelivery.objects.get(pk=delivery.pk)
    assert held.lease_expires_at == expiry(first_attempt.started_at)
    assert webhooks.renew_held("dead") == 1  # what its worker did while posting
    assert webhooks.deliver_due("w2", 10) == 0  # held: not posted twice meanwhile

    WebhookDelivery.objects.filter(pk=delivery.pk).update(lease_expires_at=timezone.now())
    assert webhooks.deliver_due("w2", 10) == 1
    delivered = WebhookDelivery.objects.get(pk=delivery.pk)
    assert delivered.status == DeliveryStatus.DELIVERED and delivered.lease_owner == ""
    assert list(delivered.attempts.values_list("number", "worker", "status_code")) == [
        (1, "dead", None),
        (2, "w2", 200),
    ]
    [request] = receiver.received
    assert verify(secret, request)["id"] == judgement.pk
    assert request["headers"]["webhook-id"] == delivered.webhook_id
    assert not webhooks.settle(delivery, "dead", 500, DeliveryStates.give_up, timezone.now())
    assert WebhookDelivery.objects.get(pk=delivery.pk).status == DeliveryStatus.DELIVERED
    assert webhooks.renew_held("dead") == 0
