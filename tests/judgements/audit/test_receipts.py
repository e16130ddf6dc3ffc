"""Every verdict's receipt, signed once when it is put in force and served as stored, in
the API's answer and the webhook, checked offline with the published keys and its
inclusion proof; any byte changed fails it, and a row changed later changes no receipt
(judgements/audit/receipts.py, magi_client/receipts.py)."""

import json

import pytest
from django.test import Client
from django.utils import timezone

from judgements.audit import receipts
from judgements.models import ApiToken, ChainEntry, Judgement, Receipt, Status
from judgements.outcome import overrides, webhooks
from magi_client.canonical import text_sha256
from magi_client.receipts import NotValid, check_receipt, keys_of
from tests.support.audit_history import REVIEW_REASON, judge_one, placed
from tests.support.states import bring, tamper

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def decided(fake_llm, user, settings):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    judgement = judge_one("w1", user, "I am going to travel to Japan next week.")
    placed()
    return judgement


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
    checked = check_receipt(answer["receipt"], published_keys(), answer_content(decided))
    receipt = checked.body
    verdict = ChainEntry.objects.get(judgement_id=decided, kind="verdict")
    assert receipt["judgement"] == decided
    assert receipt["verdict"] == receipt["panel_verdict"] == answer["status"] == "approved"
    assert receipt["entry"] == {"leaf_hash": verdict.leaf_hash, "kind": "verdict"}
    assert checked.checkpoint is not None
    assert (checked.index, checked.checkpoint.size) == (verdict.seq, 12)
    assert receipt["record"]["entries"] == 10  # submitted and nine decisions
    assert [a["model"] for a in receipt["agents"]] == ["model-a", "model-b", "model-c"]
    assert [len(r["decisions"]) for r in receipt["rounds"]] == [3, 3, 3]
    assert [s["score_tenths"] for s in receipt["scores"]] == [10, 5, 0]


def answer_content(judgement_id: int) -> bytes:
    return Judgement.objects.get(pk=judgement_id).content.encode("utf-8")


def test_a_receipt_fails_after_any_byte_of_it_changes(decided):
    judgement = Judgement.objects.with_results().get(pk=decided)
    text = json.dumps(receipts.served(judgement))
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
            same = [document.get(k) == json.loads(text)[k] for k in ("receipt", "signature")]
            if "inclusion" not in document and all(same):
                continue  # its inclusion renamed away: a signed receipt, not yet proven
            with pytest.raises(NotValid):
                check_receipt(document, keys)
            changed += 1
    assert changed > len(text)


def test_a_receipt_fails_for_other_content(decided):
    judgement = Judgement.objects.with_results().get(pk=decided)
    document = receipts.served(judgement)
    content = judgement.content.encode("utf-8")
    check_receipt(document, published_keys(), content)
    with pytest.raises(NotValid, match="not the content that was judged"):
        check_receipt(document, published_keys(), content.replace(b"Japan", b"Japon"))


def test_an_override_gives_a_receipt_of_the_verdict_in_force(decided, staff):
    overrides.override(decided, staff, "reject", REVIEW_REASON)
    document = receipts.served(Judgement.objects.with_results().get(pk=decided))
    checked = check_receipt(document, published_keys())
    receipt = checked.body
    assert (receipt["verdict"], receipt["panel_verdict"]) == ("rejected", "approved")
    assert receipt["review"]["kind"] == "override"
    assert receipt["review"]["reason_sha256"] == text_sha256(REVIEW_REASON)
    assert receipt["entry"]["kind"] == receipt["event"] == "override"
    assert checked.checkpoint is None  # not yet placed by the sequencer
    placed()
    document = receipts.served(Judgement.objects.with_results().get(pk=decided))
    assert check_receipt(document, published_keys()).checkpoint is not None


def test_a_status_flipped_in_the_database_then_the_receipt_fetched_again_still_says_what_was_signed(
    decided, user
):
    """The issue's first failure: a receipt signed on read said "rejected" after an UPDATE
    made it so. Stored once, it says what the verdict was; the rows no longer agree."""
    tamper(Judgement.objects.filter(pk=decided), Status.REJECTED)
    answer = api_get(user, f"/api/judgements/{decided}/")
    receipt = check_receipt(answer["receipt"], published_keys()).body
    assert (answer["status"], receipt["verdict"], receipt["panel_verdict"]) == (
        "rejected", "approved", "approved",
    )  # fmt: skip
    assert Receipt.objects.filter(judgement_id=decided).count() == 1


def test_the_webhook_carries_the_receipt(decided, user, receiver):
    Judgement.objects.filter(pk=decided).update(callback_url=receiver.url)
    delivery = webhooks.enqueue(decided, webhooks.FINISHED)
    assert delivery is not None
    check_receipt(delivery.payload["receipt"], published_keys())
    assert delivery.payload["receipt"]["inclusion"]["checkpoint"].startswith("magi.invalid/")


def test_an_undecided_judgement_has_no_receipt(make_judgement, user):
    judgement = make_judgement(creator=user)
    assert api_get(user, f"/api/judgements/{judgement.pk}/")["receipt"] is None
    bring(Judgement.objects.filter(pk=judgement.pk), Status.ERROR, finished_at=timezone.now())
    assert receipts.served(Judgement.objects.with_results().get(pk=judgement.pk)) is None


def test_the_api_schema_and_the_webhook_describe_the_receipt():
    document = Client().get("/api/schema.json").json()
    schemas = document["components"]["schemas"]
    judgement = schemas["Judgement"]
    assert "receipt" in judgement["required"]
    body = schemas["ReceiptBody"]
    assert set(body["required"]) >= {
        "judgement", "event", "content_sha256", "agents", "rounds", "scores", "verdict", "mark",
        "certificate", "at", "entry", "record",
    }  # fmt: skip
    assert schemas["ReceiptSignature"]["properties"]["alg"]["const"] == "EdDSA"
    webhook = document["webhooks"]["judgementEvent"]["post"]["requestBody"]["content"]
    assert webhook["application/json"]["schema"]["$ref"] == "#/components/schemas/WebhookEvent"
    assert "inclusion" in schemas["SignedReceipt"]["required"]
    paths = document["paths"]
    for path in ("/api/log/checkpoint", "/api/log/proof/inclusion", "/api/log/proof/consistency"):
        assert "security" not in paths[path]["get"] or paths[path]["get"]["security"] == [{}]
    event = schemas["WebhookEvent"]
    assert "receipt" in event["required"]
    assert "SignedReceipt" in json.dumps(event["properties"]["receipt"])


@pytest.fixture
def overridden(decided, user, staff):
    """The verdict's receipt as served before the override (proven at size 12), then the
    judgement overridden to reject, placed."""
    before = api_get(user, f"/api/judgements/{decided}/")["receipt"]
    overrides.override(decided, staff, "reject", REVIEW_REASON)
    placed()
    return before


def proven_at_latest(user, document: dict) -> dict:
    """The receipt with its entry's inclusion proof in the log's latest checkpoint, as
    anyone can fetch it from the log's public proof endpoint."""
    leaf = document["receipt"]["entry"]["leaf_hash"]
    proof = api_get(user, f"/api/log/proof/inclusion?leaf_hash={leaf}")
    checkpoint = api_get(user, "/api/log/checkpoint")["checkpoint"]
    return {**document, "inclusion": {"checkpoint": checkpoint, "index": proof["index"],
                                      "proof": proof["proof"]}}  # fmt: skip


def test_a_receipt_served_before_an_override_still_checks_at_its_own_checkpoint(overridden):
    checked = check_receipt(overridden, published_keys())
    assert checked.checkpoint is not None
    assert checked.body["verdict"] == "approved" and checked.checkpoint.size == 12


@pytest.mark.parametrize(
    "statement, failure",
    [
        ("kept", "its statement is of judgement"),
        ("none", "it carries no signed statement that it was the judgement's latest"),
        ("latest", "stale: by the log at size 13 a later entry about judgement"),
    ],
)
def test_a_receipt_superseded_by_an_override_is_refused_as_stale(
    overridden, user, decided, statement, failure
):
    """The attacker keeps the approval's receipt and proves it in the newest checkpoint,
    which also holds the override that put a rejection in force."""
    stale = proven_at_latest(user, overridden)
    if statement == "none":
        stale["current"] = None
    elif statement == "latest":
        stale["current"] = api_get(user, f"/api/judgements/{decided}/")["receipt"]["current"]
    with pytest.raises(NotValid, match=failure):
        check_receipt(stale, published_keys())
