"""`manage.py audit verify` names each way of changing the history behind MAGI's back,
one way per test, on SQLite (judgements/audit/verification.py, audit/row_checks.py).
tests/durability/test_audit_chain_postgres.py does the same on PostgreSQL."""

import io

import pytest
from django.core.management import call_command
from django.db import connection

from judgements.audit import chain, keys, verification
from judgements.models import ChainEntry, ChainHead, ChainSignature, Judgement, Override
from magi_client.canonical import canonical, entry_sha256, timestamp
from magi_client.receipts import b64url
from tests.support.audit_history import make_history

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def history(fake_llm, settings):
    """Six judgements (one overridden, one confirmed) and a team change, untouched."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    return make_history(8, "w1")


def sql(statement: str, *params) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def verify_command() -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "verify", stdout=out, stderr=err)
    return exited.value.code, out.getvalue(), err.getvalue()


def first_problem() -> str:
    report = verification.verify()
    assert report.problems, "the change went unnoticed"
    return str(report.problems[0])


def seq_of(kind: str, judgement_id: int | None = None) -> int:
    entries = ChainEntry.objects.filter(kind=kind)
    if judgement_id is not None:
        entries = entries.filter(judgement_id=judgement_id)
    return entries.values_list("seq", flat=True)[0]


def test_an_untouched_history_checks_clean(history):
    code, out, err = verify_command()
    assert (code, err) == (0, "")
    entries = ChainEntry.objects.count()
    assert f"clean: {entries} entries checked" in out
    # Genesis, 8 submitted, 72 decisions, 8 verdicts, 2 overrides, 1 confirmation, 1 team.
    assert entries == 1 + 8 + 72 + 8 + 2 + 1 + 1
    assert list(ChainEntry.objects.values_list("seq", flat=True)) == list(range(1, entries + 1))


def test_an_edited_reason_is_named(history):
    judgement = history[3]
    sql(
        "UPDATE judgements_rounddecision SET reason = %s WHERE id = (SELECT d.id FROM "
        "judgements_rounddecision d JOIN judgements_agent a ON d.agent_id = a.id "
        "WHERE a.judgement_id = %s AND a.position = 2 AND d.round = 3)",
        "Round 3: the plan is safe.",
        judgement,
    )
    code, _, err = verify_command()
    assert code == 1
    assert f"decision of judgement {judgement}, agent 2, round 3: the reason text was edited" in err


def test_a_flipped_verdict_is_named(history):
    judgement = history[2]
    sql("UPDATE judgements_judgement SET status = 'rejected' WHERE id = %s", judgement)
    problem = first_problem()
    seq = seq_of("verdict", judgement)
    assert problem == (
        f"entry {seq}: verdict of judgement {judgement}: status is 'rejected' in the "
        "database, 'approved' in the chain"
    )


def test_an_edited_override_is_named(history):
    override = Override.objects.get(judgement_id=history[5])
    sql("UPDATE judgements_override SET decision = 'approve' WHERE id = %s", override.pk)
    assert first_problem() == (
        f"entry {seq_of('override', history[5])}: override of judgement {history[5]}: "
        "decision is 'approve' in the database, 'reject' in the chain"
    )


def test_a_deleted_judgement_is_named(history):
    judgement = history[4]
    Judgement.objects.filter(pk=judgement).delete()
    assert first_problem() == (
        f"entry {seq_of('submitted', judgement)}: submitted of judgement {judgement}: the "
        "judgement is gone from the database"
    )


def test_a_deleted_entry_is_named(history):
    seq = seq_of("verdict", history[1])
    sql("DELETE FROM judgements_chainentry WHERE seq = %s", seq)
    assert first_problem() == (
        f"entry {seq}: missing: the chain jumps from entry {seq - 1} to entry {seq + 1} "
        "(entries were deleted)"
    )


def test_entries_deleted_at_the_end_are_named(history):
    last = ChainHead.objects.get().seq
    sql("DELETE FROM judgements_chainentry WHERE seq >= %s", last - 1)
    assert first_problem() == (
        f"entry {last - 1}: the chain ends at entry {last - 2} but its head is at entry "
        f"{last}: entries at its end were deleted or rewritten"
    )


def test_two_swapped_entries_are_named(history):
    first = seq_of("submitted", history[2])
    sql("UPDATE judgements_chainentry SET seq = 0 WHERE seq = %s", first)
    sql("UPDATE judgements_chainentry SET seq = %s WHERE seq = %s", first, first + 1)
    sql("UPDATE judgements_chainentry SET seq = %s WHERE seq = 0", first + 1)
    assert first_problem().startswith(
        f"entry {first}: decision of judgement {history[2]}, agent 1, round 1: its SHA-256 "
        "does not match its contents"
    )


def test_a_signature_made_with_another_key_is_named(history, settings):
    signature = ChainSignature.objects.order_by("seq").reverse()[0]
    # The same kid, another key: what a forger who knows the format but not the key signs.
    settings.MAGI_AUDIT_SIGNING_KEY = b64url(b"another key, not MAGI's, 32 byte")
    forged = keys.sign(chain.head_body(signature.seq, signature.sha256))["value"]
    sql("UPDATE judgements_chainsignature SET signature = %s WHERE id = %s", forged, signature.pk)
    settings.MAGI_AUDIT_SIGNING_KEY = "bWFnaS10ZXN0LWF1ZGl0LWtleS1ub3QtZm9yLXVzZSE"
    assert first_problem().startswith(
        f"entry {signature.seq}: forged signature: the head's signature does not match"
    )


def test_a_rewritten_chain_is_caught_by_its_signatures(history):
    """Whoever edits an entry and recomputes every hash after it (the head too) still
    cannot sign the new head: the signatures name the first signed place."""
    judgement = history[6]
    seq = seq_of("verdict", judgement)
    prev = ChainEntry.objects.get(seq=seq - 1).sha256
    for entry in ChainEntry.objects.filter(seq__gte=seq).order_by("seq"):
        payload = canonical_payload(entry, flip=entry.seq == seq)
        body = {
            "seq": entry.seq, "kind": entry.kind, "subject": entry.subject,
            "at": timestamp(entry.at), "payload": payload, "prev_sha256": prev,
        }  # fmt: skip
        prev = entry_sha256(body)
        sql(
            "UPDATE judgements_chainentry SET payload = %s, prev_sha256 = %s, sha256 = %s "
            "WHERE id = %s",
            canonical(payload).decode(), body["prev_sha256"], prev, entry.pk,
        )  # fmt: skip
    sql("UPDATE judgements_chainhead SET sha256 = %s", prev)
    sql("UPDATE judgements_judgement SET status = 'rejected' WHERE id = %s", judgement)
    assert first_problem() == f"entry {seq}: its signed head names a hash the chain does not hold"


def canonical_payload(entry: ChainEntry, flip: bool) -> dict:
    import json

    payload = json.loads(entry.payload)
    if flip:
        payload["status"] = "rejected"
    return payload


def test_a_judgement_added_behind_magis_back_is_named(history):
    sql(
        "INSERT INTO judgements_judgement (title, content, status, error_message, created_at, "
        "lease_owner, contest_reasons, contest_signals, hold_contested, checks_asked, "
        "prompt_variants, hold_unmeasured, takeovers) VALUES ('x', 'y', 'approved', '', "
        "CURRENT_TIMESTAMP, '', '[]', '[]', 0, '[]', '[]', 0, 0)"
    )
    added = Judgement.objects.order_by("-pk")[0].pk
    problems = [str(p) for p in verification.verify().problems]
    assert (
        f"no submitted entry for judgement {added}: its row was added, or its entry "
        "removed, outside MAGI" in problems
    )


def test_judgements_before_the_chain_have_no_entries_and_check_clean(make_judgement):
    """A database migrated with judgements in it: the chain starts after them."""
    old = make_judgement()
    ChainEntry.objects.all().delete()
    ChainHead.objects.all().delete()
    new = make_judgement()
    report = verification.verify()
    assert report.clean, report.problems
    assert report.judgements_before == old.pk
    assert ChainEntry.objects.filter(judgement_id=new.pk).exists()
