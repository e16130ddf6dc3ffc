"""Every verdict's signed receipt, in the API's answer and the webhook, checked offline
with the published keys; any byte changed fails it (judgements/audit/receipts.py,
magi_client/receipts.py)."""

import json

import pytest
from django.test import Client
from django.utils import timezone

from judgements.audit import receipts
from judgements.models import ApiToken, ChainEntry, Judgement, Status
from judgements.outcome import overrides, webhooks
from magi_client.canonical import text_sha256
from magi_client.receipts import NotValid, check_receipt, keys_of
from tests.support.audit_history import REVIEW_REASON, judge_one

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def decided(fake_llm, user, settings):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    return judge_one("w1", user, "I am going to travel to Japan next week.")


def api_get(user, path: str) -> dict:
    """The API's answer to `user`'s program (a sync client: these tests are sync)."""
    token = ApiToken.issue(user, "tests")[1]
    response = Client().get(path, headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.content
    return response.json()


def published_keys() -> dict:
    response = Client().get("/.well-known/magi-keys.json")
    assert response.status_code == 200
    return keys_of(response.json())


def test_the_keys_are_published_without_sign_in_as_a_jwk_set():
    response = Client().get("/.well-known/jwks.json")
    assert response.status_code == 200
    (key,) = response.json()["keys"]
    assert (key["kty"], key["crv"], key["alg"], key["use"]) == ("OKP", "Ed25519", "EdDSA", "sig")


def test_the_apis_answer_carries_a_receipt_that_checks_offline(decided, user):
    answer = api_get(user, f"/api/judgements/{decided}/")
    receipt = check_receipt(answer["receipt"], published_keys(), answer_content(decided))
    verdict = ChainEntry.objects.get(judgement_id=decided, kind="verdict")
    assert receipt["judgement"] == decided
    assert receipt["verdict"] == receipt["panel_verdict"] == answer["status"] == "approved"
    assert receipt["chain"] == {
        "seq": verdict.seq,
        "entry_sha256": verdict.sha256,
        "kind": "verdict",
    }
    assert [a["model"] for a in receipt["agents"]] == ["model-a", "model-b", "model-c"]
    assert [len(r["decisions"]) for r in receipt["rounds"]] == [3, 3, 3]
    assert [s["score_tenths"] for s in receipt["scores"]] == [10, 5, 0]


def answer_content(judgement_id: int) -> bytes:
    return Judgement.objects.get(pk=judgement_id).content.encode("utf-8")


def test_a_receipt_fails_after_any_byte_of_it_changes(decided):
    judgement = Judgement.objects.with_results().get(pk=decided)
    text = json.dumps(receipts.signed(judgement))
    keys = published_keys()
    check_receipt(json.loads(text), keys)
    changed = 0
    for at, char in enumerate(text):
        for other in {"0", "1", "a", "x"} - {char}:
            try:
                document = json.loads(text[:at] + other + text[at + 1 :])
            except ValueError:
                continue
            if document == json.loads(text):
                continue  # the same JSON value (a key's place, say): nothing changed
            with pytest.raises(NotValid):
                check_receipt(document, keys)
            changed += 1
    assert changed > len(text)


def test_a_receipt_fails_for_other_content(decided):
    judgement = Judgement.objects.with_results().get(pk=decided)
    document = receipts.signed(judgement)
    content = judgement.content.encode("utf-8")
    check_receipt(document, published_keys(), content)
    with pytest.raises(NotValid, match="not the content that was judged"):
        check_receipt(document, published_keys(), content.replace(b"Japan", b"Japon"))


def test_an_override_gives_a_receipt_of_the_verdict_in_force(decided, staff):
    overrides.override(decided, staff, "reject", REVIEW_REASON)
    document = receipts.signed(Judgement.objects.with_results().get(pk=decided))
    receipt = check_receipt(document, published_keys())
    assert (receipt["verdict"], receipt["panel_verdict"]) == ("rejected", "approved")
    assert receipt["review"]["kind"] == "override"
    assert receipt["review"]["reason_sha256"] == text_sha256(REVIEW_REASON)
    assert receipt["chain"]["kind"] == "override"


def test_the_webhook_carries_the_receipt(decided, user, receiver):
    Judgement.objects.filter(pk=decided).update(callback_url=receiver.url)
    delivery = webhooks.enqueue(decided, webhooks.FINISHED)
    assert delivery is not None
    check_receipt(delivery.payload["receipt"], published_keys())


def test_an_undecided_judgement_has_no_receipt(make_judgement, user):
    judgement = make_judgement(creator=user)
    assert api_get(user, f"/api/judgements/{judgement.pk}/")["receipt"] is None
    Judgement.objects.filter(pk=judgement.pk).update(
        status=Status.ERROR, finished_at=timezone.now()
    )
    assert receipts.signed(Judgement.objects.with_results().get(pk=judgement.pk)) is None


def test_the_api_schema_and_the_webhook_describe_the_receipt():
    document = Client().get("/api/schema.json").json()
    schemas = document["components"]["schemas"]
    judgement = schemas["Judgement"]
    assert "receipt" in judgement["required"]
    body = schemas["ReceiptBody"]
    assert set(body["required"]) >= {
        "judgement", "content_sha256", "agents", "rounds", "scores", "verdict", "mark",
        "certificate", "at", "chain",
    }  # fmt: skip
    assert schemas["ReceiptSignature"]["properties"]["alg"]["const"] == "EdDSA"
    webhook = document["webhooks"]["judgementEvent"]["post"]["requestBody"]["content"]
    assert webhook["application/json"]["schema"]["$ref"] == "#/components/schemas/WebhookEvent"
    event = schemas["WebhookEvent"]
    assert "receipt" in event["required"]
    assert "SignedReceipt" in json.dumps(event["properties"]["receipt"])
