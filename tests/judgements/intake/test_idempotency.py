"""Idempotency-Key on POST /api/judgements/ (judgements/intake/idempotency.py). The concurrent
case against a real server is in tests/durability/test_idempotency_live.py."""

import json
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.utils import timezone

from judgements.models import ApiToken, IdempotencyKey, Judgement
from tests.support.api_client import TokenClient
from tests.support.cases import case_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("empty_engine_channel"),
]


async def submit(api, body, key: str | None = "deploy-42", query: str = ""):
    headers = {} if key is None else {"Idempotency-Key": key}
    raw = body if isinstance(body, str) else json.dumps(body)
    return await api.post(
        f"/api/judgements/{query}", raw, content_type="application/json", headers=headers
    )


async def wake_ups() -> list[int]:
    """The wake-ups waiting on the engine channel (each would start a worker's run)."""
    layer = get_channel_layer()
    assert isinstance(layer, InMemoryChannelLayer)
    queue = layer.channels.get(settings.MAGI_ENGINE_CHANNEL)
    return [] if queue is None else [message["judgement_id"] for _, message in queue._queue]


async def test_the_same_key_and_body_replays_the_first_judgement(fake_llm, api):
    first = await submit(api, case_for())
    assert first.status_code == 201
    assert first["Idempotency-Replayed"] == "false"
    # The same JSON spaced and ordered differently is the same body.
    respaced = json.dumps(case_for(), indent=4, sort_keys=True)
    again = await submit(api, respaced)
    assert again.status_code == 201
    assert again["Idempotency-Replayed"] == "true"
    assert again.json()["id"] == first.json()["id"]
    assert again["Location"] == first["Location"]
    assert await Judgement.objects.acount() == 1
    # One wake-up, from the first request: the replay started nothing.
    assert await wake_ups() == [first.json()["id"]]


async def test_the_same_key_with_another_body_is_refused(fake_llm, api):
    first = await submit(api, case_for())
    other = await submit(api, case_for(title="Trip to Peru"))
    assert other.status_code == 422
    body = other.json()
    assert "different body" in body["error"] and "deploy-42" in body["error"]
    assert list(body["errors"]) == ["Idempotency-Key"]
    assert await Judgement.objects.acount() == 1
    assert (await Judgement.objects.aget()).pk == first.json()["id"]


async def test_keys_are_per_user(fake_llm, api, other_user):
    theirs = TokenClient(f"Bearer {(await sync_to_async(ApiToken.issue)(other_user, 'x'))[1]}")
    mine = await submit(api, case_for())
    other = await submit(theirs, case_for())
    assert other.status_code == 201 and other["Idempotency-Replayed"] == "false"
    assert other.json()["id"] != mine.json()["id"]
    assert await Judgement.objects.acount() == 2


async def test_an_expired_key_starts_a_new_judgement(fake_llm, api, settings):
    settings.MAGI_IDEMPOTENCY_HOURS = 1
    first = await submit(api, case_for())
    await IdempotencyKey.objects.aupdate(created_at=timezone.now() - timedelta(minutes=61))
    again = await submit(api, case_for(title="Changed, but the old key has expired"))
    assert again.status_code == 201 and again["Idempotency-Replayed"] == "false"
    assert again.json()["id"] != first.json()["id"]
    assert await IdempotencyKey.objects.acount() == 1


async def test_a_replay_is_not_refused_by_the_rate_limit(fake_llm, api, settings):
    settings.MAGI_RATE_LIMIT_PER_USER = 1
    first = await submit(api, case_for())
    again = await submit(api, case_for())
    assert again.status_code == 201 and again.json()["id"] == first.json()["id"]
    refused = await submit(api, case_for(), key="another-key")
    assert refused.status_code == 429


async def test_an_invalid_body_stores_no_key(fake_llm, api):
    bad = await submit(api, case_for(content=""))
    assert bad.status_code == 400 and list(bad.json()["errors"]) == ["content"]
    assert await IdempotencyKey.objects.acount() == 0
    good = await submit(api, case_for())
    assert good.status_code == 201 and good["Idempotency-Replayed"] == "false"


@pytest.mark.parametrize(
    ("key", "code", "message"),
    [("   ", 422, "Must not be empty."), ("k" * 256, 400, "At most 255 characters")],
)
async def test_it_refuses_an_unusable_key(fake_llm, api, key, code, message):
    response = await submit(api, case_for(), key=key)
    assert response.status_code == code
    assert message in response.json()["errors"]["Idempotency-Key"][0]
    assert await Judgement.objects.acount() == 0


async def test_a_key_of_255_characters_is_kept(fake_llm, api):
    key = "k" * 255
    first = await submit(api, case_for(), key=key)
    again = await submit(api, case_for(), key=key)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json()["id"] == first.json()["id"]


async def test_without_a_key_every_post_starts_a_judgement(fake_llm, api):
    one = await submit(api, case_for(), key=None)
    two = await submit(api, case_for(), key=None)
    assert "Idempotency-Replayed" not in one
    assert one.json()["id"] != two.json()["id"]
