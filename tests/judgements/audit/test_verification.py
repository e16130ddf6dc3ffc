"""`manage.py audit verify` names each way of changing the history behind MAGI's back,
one way per test, on SQLite (judgements/audit/verification.py and the checks it runs:
tree_checks, row_checks, receipt_checks, coverage, configuration/live_state.py).
tests/durability/test_audit_chain_postgres.py does the same on PostgreSQL."""

import io
import json

import pytest
from django.core.management import call_command

from judgements.audit import keys, verification
from judgements.models import ChainEntry, Checkpoint, Judgement, LogState, Override
from magi_client import checkpoints
from magi_client.receipts import b64url
from tests.support.audit_history import placed, with_a_budget
from tests.support.live_state import sql
from tests.support.states import tamper

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def history(fake_llm, settings):
    """Eight judgements (two overridden, one confirmed), a team change and a budget, all
    placed in the log under signed checkpoints; untouched."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    return with_a_budget(8)


def verify_command(*args: str) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "verify", *args, stdout=out, stderr=err)
    return exited.value.code, out.getvalue(), err.getvalue()


def problems(kept: str | None = None) -> list[str]:
    from judgements.configuration import live_state

    report = verification.verify(
        verification.trust_beside_the_data(), kept, [live_state.differences]
    )
    return [str(problem) for problem in report.problems]


def first_problem(kept: str | None = None) -> str:
    found = problems(kept)
    assert found, "the change went unnoticed"
    return found[0]


def seq_of(kind: str, judgement_id: int) -> int:
    return int(seqs_of(kind, judgement_id)[0] or 0)


def seqs_of(kind: str, judgement_id: int) -> list:
    entries = ChainEntry.objects.filter(kind=kind, judgement_id=judgement_id)
    return list(entries.values_list("seq", flat=True))


def test_an_untouched_history_checks_clean(history):
    code, out, err = verify_command()
    assert (code, err) == (0, "")
    entries = ChainEntry.objects.count()
    assert f"clean: {entries} entries checked" in out
    assert "keys: this server's own signing key and retired keys" in out
    # Genesis, two users and a team made, 8 submitted, 72 decisions, 8 verdicts, 2 overrides,
    # 1 confirmation, 1 team change, 1 budget.
    assert entries == 1 + 3 + 8 + 72 + 8 + 2 + 1 + 1 + 1
    assert list(ChainEntry.objects.values_list("seq", flat=True)) == list(range(entries))


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


def test_a_status_flip_is_named_and_its_receipt_disagrees(history):
    judgement = history[2]
    tamper(Judgement.objects.filter(pk=judgement), "rejected")
    found = problems()
    assert found[0] == (
        f"entry {seq_of('verdict', judgement)}: verdict of judgement {judgement}: status is "
        "'rejected' in the database, 'approved' in the chain"
    )
    assert (
        f"judgement {judgement}: its receipt says 'approved' (in force 'approved'), the database "
        "'rejected' (in force 'rejected')" in found
    )


def test_an_edited_override_is_named(history):
    override = Override.objects.get(judgement_id=history[5])
    sql("UPDATE judgements_override SET decision = 'approve' WHERE id = %s", override.pk)
    assert first_problem() == (
        f"entry {seq_of('override', history[5])}: override of judgement {history[5]}: "
        "decision is 'approve' in the database, 'reject' in the chain"
    )


def test_a_backdated_override_is_found_by_its_id(history, staff):
    """An override row dated before the log started, on a judgement made after it: the
    search goes by id, not by the row's own date."""
    judgement = history[1]
    sql(
        "INSERT INTO judgements_override (judgement_id, by_id, at, panel_status, decision, "
        "reason) VALUES (%s, %s, '2001-01-01 00:00:00', 'approved', 'reject', 'backdated')",
        judgement, staff.pk,
    )  # fmt: skip
    found = problems()
    assert (
        f"no override entry for judgement {judgement}: its row was added, or its entry "
        "removed, outside MAGI" in found
    )
    assert any(f"judgement {judgement}: its receipt says" in problem for problem in found)


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
        f"entry {seq}: missing: the log jumps from place {seq - 1} to place {seq + 1} "
        "(entries were deleted)"
    )


def test_a_deleted_entry_is_named_once_and_the_rest_still_checked(history):
    """One entry gone in the middle of the log: the gap, what the entry described (the
    verdict with no entry, its receipt naming no entry), and nothing about the entries
    after it, which are there and describe their rows (issue 70: it was 532 problems, one
    of them "entries at its end were deleted" while the log ran on)."""
    seq = seq_of("verdict", history[1])
    sql("DELETE FROM judgements_chainentry WHERE seq = %s", seq)
    found = problems()
    assert len(found) <= 3, found
    assert not [p for p in found if "at its end" in p or "tail" in p]
    assert any(f"no verdict entry for judgement {history[1]}" in p for p in found)
    edited = history[5]
    tamper(Judgement.objects.filter(pk=edited), "rejected")
    assert any(f"verdict of judgement {edited}: status is 'rejected'" in p for p in problems())


def truncate(after: int) -> None:
    """What an attacker with the database does: the last judgement's rows, entries,
    subtrees, receipt and checkpoints deleted, the log's state set back to match."""
    size = after
    sql(
        "DELETE FROM judgements_receipt WHERE entry_id IN "
        "(SELECT id FROM judgements_chainentry WHERE seq >= %s)",
        size,
    )
    sql("DELETE FROM judgements_chainentry WHERE seq >= %s", size)
    sql("DELETE FROM judgements_checkpoint")
    sql(
        "DELETE FROM judgements_lognode "
        "WHERE key / 64 * (1 << (key % 64)) + (1 << (key % 64)) > %s",
        size,
    )
    sql("UPDATE judgements_logstate SET size = 0, root_hash = ''")


def test_a_truncated_tail_with_its_head_reset_fails_against_a_kept_checkpoint(history, tmp_path):
    kept = Checkpoint.objects.order_by("-size")[0]
    state = tmp_path / "witness.json"
    state.write_text(json.dumps({"checkpoint": kept.note}))
    judgement = history[-1]
    first = int(ChainEntry.objects.filter(judgement_id=judgement).order_by("seq")[0].seq or 0)
    Judgement.objects.filter(pk=judgement).delete()
    truncate(first)
    # The sequencer signs what is left: the database checks clean on its own...
    sql("DELETE FROM judgements_lognode")
    sql("UPDATE judgements_chainentry SET seq = NULL")
    placed()
    assert not [p for p in problems() if "audit row" not in p and "budget" not in p]
    # ...but not against the checkpoint a witness kept.
    code, _, err = verify_command("--checkpoint", str(state))
    assert code == 1
    size = LogState.objects.get().size
    assert size < kept.size
    assert f"the log has {size} entries but the kept checkpoint has {kept.size}: its tail" in err


def test_a_rollback_fails_against_the_checkpoint_directory_alone(fake_llm, settings, tmp_path):
    """No witness, no --checkpoint: the server's own append-only directory is read."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    settings.MAGI_AUDIT_CHECKPOINT_DIR = str(tmp_path)
    from judgements.outcome.checkpoints import sequence_and_publish

    made = with_a_budget(3)
    sequence_and_publish("tests")
    code, out, _ = verify_command()
    newest = sorted(tmp_path.glob("checkpoint-*.txt"))[-1]
    assert (
        code == 0 and f"kept checkpoint: {newest} (the newest in MAGI_AUDIT_CHECKPOINT_DIR" in out
    )
    first = int(ChainEntry.objects.filter(judgement_id=made[-1]).order_by("seq")[0].seq or 0)
    Judgement.objects.filter(pk=made[-1]).delete()
    truncate(first)
    sql("DELETE FROM judgements_lognode")
    sql("UPDATE judgements_chainentry SET seq = NULL")
    placed()
    code, _, err = verify_command()
    assert code == 1
    assert "but the kept checkpoint has" in err and "its tail was cut off" in err


def test_a_rewritten_log_is_caught_by_its_checkpoints(history):
    """Whoever edits an entry and recomputes its leaf hash and every stored subtree still
    cannot sign the new root."""
    judgement = history[6]
    seq = seq_of("verdict", judgement)
    entry = ChainEntry.objects.get(seq=seq)
    payload = json.loads(entry.payload) | {"status": "rejected"}
    from judgements.audit import log
    from magi_client.canonical import canonical, leaf_hash

    text = canonical(payload).decode()
    digest = leaf_hash(log.leaf_of(entry, payload))
    sql(
        "UPDATE judgements_chainentry SET payload = %s, leaf_hash = %s WHERE id = %s",
        text,
        digest,
        entry.pk,
    )
    tamper(Judgement.objects.filter(pk=judgement), "rejected")
    found = problems()
    assert any("is not the one its leaves make" in p for p in found), found
    assert any("do not make its root" in p for p in found)


def test_a_key_added_to_the_retired_keys_signs_nothing_trusted(history, settings, tmp_path):
    """An attacker appends their own key to var/audit-retired-keys and signs a checkpoint
    with it: audit verify with the keys given trusts it not, and without them says so."""
    settings.VAR_DIR = tmp_path
    own = keys.private_key(keys.new_seed())
    public = keys.public_bytes(own)
    (tmp_path / keys.RETIRED_FILE).write_text(b64url(public) + "\n")
    state = LogState.objects.get()
    forged = checkpoints.signed_note(state.origin, state.size, bytes(32), public, own.sign)
    Checkpoint.objects.filter(size=state.size).update(note=forged)
    keys_file = tmp_path / "keys.json"
    keys_file.write_text(json.dumps(keys.jwks()))
    code, out, err = verify_command("--keys", str(keys_file))
    assert code == 1
    assert (
        f"checkpoint at size {state.size}: the checkpoint is not signed by any of the keys given"
        in err
    )
    assert "not trusted: retired key" in out


def test_an_edited_reply_is_named(history):
    judgement = history[3]
    sql(
        'UPDATE judgements_llmattempt SET response_text = \'{"decision": "reject"}\' WHERE id = '
        "(SELECT t.id FROM judgements_llmattempt t JOIN judgements_agent a ON t.agent_id = a.id "
        "WHERE a.judgement_id = %s AND a.position = 1 AND t.round = 2)",
        judgement,
    )
    found = problems()
    assert found[0].endswith(
        f"decision of judgement {judgement}, agent 1, round 2: the call (its prompt, reply, "
        "model or error) was edited, or is gone"
    )
    assert any("is in no entry: its prompt, reply, model or error was edited" in p for p in found)


def test_an_edited_budget_is_named(history):
    sql("UPDATE judgements_budget SET limit_usd = 5000")
    assert any("budget" in p and "differs from its last audited state" in p for p in problems())


def test_a_deleted_budget_is_named(history):
    sql("DELETE FROM judgements_budget")
    assert any("budget" in p and "is gone" in p for p in problems())


def test_a_judgement_added_behind_magis_back_is_named(history):
    sql(
        "INSERT INTO judgements_judgement (title, content, status, error_message, created_at, "
        "lease_owner, contest_reasons, contest_signals, hold_contested, checks_asked, "
        "prompt_variants, hold_unmeasured, takeovers) VALUES ('x', 'y', 'approved', '', "
        "CURRENT_TIMESTAMP, '', '[]', '[]', 0, '[]', '[]', 0, 0)"
    )
    added = Judgement.objects.order_by("-pk")[0].pk
    assert (
        f"no submitted entry for judgement {added}: its row was added, or its entry "
        "removed, outside MAGI" in problems()
    )


def test_judgements_before_the_log_have_no_entries_and_check_clean(make_judgement):
    """A database migrated with judgements in it: the log starts after them."""
    old = make_judgement()
    ChainEntry.objects.all().delete()
    LogState.objects.all().delete()
    new = make_judgement()
    placed()
    report = verification.verify(verification.trust_beside_the_data())
    assert report.clean, report.problems
    assert report.judgements_before == old.pk
    assert ChainEntry.objects.filter(judgement_id=new.pk).exists()
