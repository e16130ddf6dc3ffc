"""The sequencer: one worker at a time, by the lease every background job uses, places
the queued entries in order, a batch and a signed checkpoint at a time, its subtrees
stored so that every proof checks; a worker that lost the lease places nothing
(judgements/audit/sequencer.py, audit/proofs.py)."""

import pytest
from django.test import Client

from judgements.audit import proofs, sequencer
from judgements.models import ChainEntry, Checkpoint, LogState
from magi_client import checkpoints, merkle
from magi_client.receipts import keys_of
from tests.support.audit_history import make_history

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queued(fake_llm, settings):
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    make_history(3, "w1")
    return ChainEntry.objects.count()


def keys() -> dict:
    return keys_of(Client().get("/.well-known/magi-keys.json").json())


def test_it_places_every_queued_entry_in_batches_each_under_a_signed_checkpoint(queued, settings):
    settings.MAGI_AUDIT_LOG_BATCH = 10
    assert sequencer.run("s1") == queued
    assert list(ChainEntry.objects.order_by("id").values_list("seq", flat=True)) == list(
        range(queued)
    )
    sizes = list(Checkpoint.objects.values_list("size", flat=True))
    assert sizes == [*range(10, queued, 10), queued]
    state = LogState.objects.get()
    assert (state.size, state.lease_owner) == (queued, "")
    for row in Checkpoint.objects.all():
        found = checkpoints.checked(row.note, keys(), state.origin)
        assert (found.size, found.root.hex()) == (row.size, row.root_hash)
    assert sequencer.run("s1") == 0


def test_every_proof_it_serves_checks_against_its_checkpoints(queued, settings):
    settings.MAGI_AUDIT_LOG_BATCH = 7
    sequencer.run("s1")
    roots = {row.size: bytes.fromhex(row.root_hash) for row in Checkpoint.objects.all()}
    leaves = {
        seq: bytes.fromhex(h) for seq, h in ChainEntry.objects.values_list("seq", "leaf_hash")
    }
    for size, root in roots.items():
        for index in range(0, size, 5):
            proof = [bytes.fromhex(h) for h in proofs.inclusion(index, size)]
            merkle.check_inclusion(leaves[index], index, size, proof, root)
        for first, first_root in roots.items():
            if first <= size:
                proof = [bytes.fromhex(h) for h in proofs.consistency(first, size)]
                merkle.check_consistency(first, size, first_root, root, proof)


def test_a_worker_without_the_lease_places_nothing(queued):
    sequencer.run("s1")
    ChainEntry.objects.filter(kind="genesis").update(seq=None)  # queue one again
    LogState.objects.update(lease_owner="s2", lease_expires_at="2999-01-01T00:00:00Z")
    assert sequencer.run("s1") == 0
    assert sequencer.place_batch("s1", 100) == (0, 0)


def test_the_log_endpoints_serve_the_checkpoint_and_proofs_without_sign_in(queued):
    sequencer.run("s1")
    client = Client()
    latest = client.get("/api/log/checkpoint").json()
    assert latest["size"] == queued
    checkpoints.checked(latest["checkpoint"], keys())
    entry = ChainEntry.objects.get(seq=3)
    answer = client.get(f"/api/log/proof/inclusion?leaf_hash={entry.leaf_hash}&tree_size=8").json()
    assert (answer["index"], answer["tree_size"]) == (3, 8)
    assert client.get("/api/log/proof/consistency?first=5&second=9").json()["proof"]
    assert client.get(f"/api/log/proof/consistency?first=9&second={queued + 1}").status_code == 404
    assert client.get("/api/log/proof/inclusion?leaf_hash=zz").status_code == 400


def test_each_checkpoint_is_kept_in_the_directory_and_sent_to_the_subscribers(
    queued, settings, tmp_path
):
    from judgements.models import WebhookDelivery
    from judgements.outcome import checkpoints as publishing
    from judgements.outcome import webhooks

    settings.MAGI_AUDIT_LOG_BATCH = 20
    settings.MAGI_AUDIT_CHECKPOINT_DIR = str(tmp_path)
    settings.MAGI_WEBHOOK_HOSTS = ["hooks.example.com"]
    settings.MAGI_AUDIT_CHECKPOINT_WEBHOOKS = [
        "https://hooks.example.com/log",
        "https://elsewhere.test/",
    ]
    settings.MAGI_AUDIT_CHECKPOINT_WEBHOOK_SECRET = "whsec_" + "QUJD" * 8
    assert publishing.sequence_and_publish("s1") == queued
    notes = {row.size: row.note for row in Checkpoint.objects.all()}
    files = sorted(tmp_path.iterdir())
    assert [path.read_text() for path in files] == [notes[size] for size in sorted(notes)]
    sent = WebhookDelivery.objects.filter(event="log.checkpoint").order_by("id")
    assert [(d.url, d.judgement_id) for d in sent] == [
        ("https://hooks.example.com/log", None)
    ] * len(notes)
    assert [d.payload["checkpoint"] for d in sent] == [notes[size] for size in sorted(notes)]
    assert webhooks.key_of(sent[0]) == b"ABC" * 8
    assert not Checkpoint.objects.filter(published=False).exists()
    assert publishing.publish_pending() == 0


def test_a_checkpoint_the_directory_holds_otherwise_is_not_published(queued, settings, tmp_path):
    from judgements.outcome import checkpoints as publishing

    settings.MAGI_AUDIT_CHECKPOINT_DIR = str(tmp_path)
    (tmp_path / f"checkpoint-{queued:012d}.txt").write_text("another log's checkpoint\n")
    publishing.sequence_and_publish("s1")
    assert Checkpoint.objects.get(size=queued).published is False
