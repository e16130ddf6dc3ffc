"""Queued entries forged by whoever can write the database but does not hold the signing
key, as they would forge them (raw SQL, MAGI's own open code to describe the rows, no
key): the sequencer sets each aside instead of placing and signing it, the entries behind
it are placed, and `manage.py audit verify` names it (audit/sequencer.py made_by_magi,
screened; audit/verification.py; core/entry_tags.py). On SQLite; tests/durability/
test_audit_chain_postgres.py forges one on PostgreSQL."""

import io
import json
import logging

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from judgements.audit import keys, log, record, sequencer
from judgements.configuration import budget_config
from judgements.models import (
    AuditEntry,
    Budget,
    ChainEntry,
    EntryKind,
    LogState,
    SetAside,
)
from magi_client.canonical import canonical, entry_leaf_hash, timestamp
from tests.support.audit_history import placed, with_a_budget

pytestmark = pytest.mark.django_db(transaction=True)

FOREIGN_SEED = "bm90LW1hZ2lzLWtleS1idXQtdGhlLWF0dGFja2VycyE"


@pytest.fixture
def history(fake_llm, settings):
    """Three judgements (one overridden) and a budget of 5 a day, placed and signed."""
    settings.MAGI_RATE_LIMIT_PER_USER = 0
    settings.MAGI_UNFINISHED_PER_USER = 0
    return with_a_budget(3)


def insert_entry(kind: str, subject: str, payload: dict, judgement: int | None, tag: str) -> int:
    """An entry queued by raw SQL, its leaf hash computed as MAGI's (open) code does."""
    at = timestamp(ChainEntry.objects.latest("id").at)
    text = canonical(payload).decode()
    digest = entry_leaf_hash(kind, subject, judgement, at, text)
    return insert_row(kind, subject, judgement, at, text, digest, tag)


def insert_row(kind, subject, judgement, at, payload, leaf_hash, tag) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO judgements_chainentry (kind, subject, judgement_id, at, payload, "
            "prev_sha256, leaf_hash, tag, set_aside) VALUES (%s, %s, %s, %s, %s, '', %s, %s, '') "
            "RETURNING id",
            [kind, subject, judgement, at.replace("T", " ").rstrip("Z"), payload, leaf_hash, tag],
        )
        return cursor.fetchone()[0]


def budget_raised_to_5000(tag: str = "") -> int:
    """The issue's attack: a budget's limit raised 5 -> 5000 with an audit row saying so,
    and its configuration entry queued, all by SQL, described by MAGI's open code (so
    that rows, audit row and entry agree). The forged entry's id."""
    budget = Budget.objects.get()
    last = AuditEntry.objects.filter(subject="budget").latest("pk")
    with connection.cursor() as cursor:
        cursor.execute("UPDATE judgements_budget SET limit_usd = 5000 WHERE id = %s", [budget.pk])
        after = budget_config.audit_state(Budget.objects.get())
        cursor.execute(
            "INSERT INTO judgements_auditentry (subject, target, by_id, actor, at, before, "
            "after) VALUES ('budget', %s, %s, '', %s, %s, %s) RETURNING id",
            [last.target, last.by_id, last.at, json.dumps(last.after), json.dumps(after)],
        )
        (forged_row,) = cursor.fetchone()
    payload = record.configuration_fact(AuditEntry.objects.get(pk=forged_row))
    return insert_entry(EntryKind.CONFIGURATION, last.target, dict(payload), None, tag)


def magi_changes_the_budget(limit: int) -> None:
    """A change made the audited way (configuration/budget_config.py)."""
    budget = Budget.objects.get()
    staff = AuditEntry.objects.filter(subject="budget").latest("pk").by
    with transaction.atomic():
        before = budget_config.audit_state(budget)
        Budget.objects.filter(pk=budget.pk).update(limit_usd=limit)
        budget_config.record_change(Budget.objects.get(pk=budget.pk), before, staff)


def verify_err() -> tuple[object, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "verify", "--all", stdout=out, stderr=err)
    return exited.value.code, err.getvalue()


def test_an_entry_magi_queued_checks_clean_before_and_after_it_is_placed(history):
    magi_changes_the_budget(6)
    for queued in (1, 0):
        out = io.StringIO()
        with pytest.raises(SystemExit) as exited:
            call_command("audit", "verify", stdout=out, stderr=io.StringIO())
        assert exited.value.code == 0
        assert (f", {queued} queued" in out.getvalue()) == bool(queued)
        placed()


def test_an_entry_forged_with_its_rows_by_sql_is_set_aside_and_named(history, caplog):
    forged = budget_raised_to_5000()
    size = ChainEntry.objects.filter(seq__isnull=False).count()
    code, err = verify_err()  # before the sequencer's run as after it
    assert code == 1 and f"log entry id {forged} (configuration of " in err
    with caplog.at_level(logging.ERROR, logger="judgements.audit.sequencer"):
        assert placed() == 0
    entry = ChainEntry.objects.get(pk=forged)
    assert (entry.seq, entry.set_aside) == (None, SetAside.UNTAGGED)
    assert f"queued entries {forged} set aside, not placed: Queued without MAGI's key" in (
        caplog.text
    )
    assert ChainEntry.objects.filter(seq__isnull=False).count() == size  # nothing signed
    code, err = verify_err()
    assert code == 1
    assert err.startswith(
        f"TAMPERED: log entry id {forged} (configuration of {entry.subject}) was queued "
        "without MAGI's key: its tag does not check; it is set aside, never placed or signed"
    )
    # It describes nothing: the audit row it was written with has no entry.
    assert "no configuration entry for audit row" in err


def test_an_entry_made_with_magis_code_and_another_key_is_set_aside(history, settings):
    """The attacker runs MAGI's own change function with a key of theirs: the rows and
    the entry are exactly MAGI's, but for the tag."""
    real = settings.MAGI_AUDIT_SIGNING_KEY
    settings.MAGI_AUDIT_SIGNING_KEY = FOREIGN_SEED
    magi_changes_the_budget(5000)
    settings.MAGI_AUDIT_SIGNING_KEY = real
    (forged,) = ChainEntry.objects.filter(seq__isnull=True)
    assert placed() == 0
    assert ChainEntry.objects.get(pk=forged.pk).set_aside == SetAside.UNTAGGED
    code, err = verify_err()
    assert code == 1 and f"log entry id {forged.pk} " in err.splitlines()[0]


def test_a_tag_copied_from_a_real_entry_does_not_place_a_forged_one(history):
    real = ChainEntry.objects.filter(kind=EntryKind.CONFIGURATION).latest("seq")
    forged = budget_raised_to_5000(tag=real.tag)
    assert placed() == 0
    assert ChainEntry.objects.get(pk=forged).set_aside == SetAside.UNTAGGED
    code, err = verify_err()
    assert code == 1 and err.startswith(f"TAMPERED: log entry id {forged} (configuration")


def test_a_leaf_hash_and_tag_copied_onto_forged_contents_are_set_aside(history):
    """The real entry's leaf hash and tag, with contents of the attacker's: the contents
    are hashed again, so the copied pair proves nothing about them."""
    real = ChainEntry.objects.filter(kind=EntryKind.VERDICT).latest("seq")
    payload = json.loads(real.payload) | {"status": "rejected"}
    forged = insert_row(
        real.kind, real.subject, real.judgement_id, timestamp(real.at),
        canonical(payload).decode(), real.leaf_hash, real.tag,
    )  # fmt: skip
    assert placed() == 0
    assert ChainEntry.objects.get(pk=forged).set_aside == SetAside.UNTAGGED
    assert verify_err()[1].startswith(f"TAMPERED: log entry id {forged} (verdict of")


def test_an_edited_tag_is_set_aside_and_the_entries_behind_it_are_placed(history):
    for limit in (6, 7, 8):  # three changes made by MAGI, queued
        magi_changes_the_budget(limit)
    first, middle, last = ChainEntry.objects.filter(seq__isnull=True).order_by("id")
    edited = ("0" if middle.tag[0] != "0" else "1") + middle.tag[1:]
    ChainEntry.objects.filter(pk=middle.pk).update(tag=edited)
    assert placed() == 2
    rows = ChainEntry.objects.filter(pk__in=[first.pk, middle.pk, last.pk]).order_by("id")
    assert [(row.seq is None, row.set_aside) for row in rows] == [
        (False, ""), (True, SetAside.UNTAGGED), (False, ""),
    ]  # fmt: skip
    before, after = (row.seq or 0 for row in rows if row.seq is not None)
    assert after == before + 1  # placed one after the other, the gap closed
    assert verify_err()[1].startswith(f"TAMPERED: log entry id {middle.pk} (configuration")


def test_a_copy_of_a_placed_entry_is_set_aside_as_a_repeat(history):
    """A whole valid entry replayed (its tag too): the sequencer does not place a leaf the
    log already has, so an old entry cannot be made the latest word on its rows."""
    real = ChainEntry.objects.filter(kind=EntryKind.CONFIGURATION).latest("seq")
    copy = insert_row(
        real.kind, real.subject, real.judgement_id, timestamp(real.at), real.payload,
        real.leaf_hash, real.tag,
    )  # fmt: skip
    assert placed() == 0
    assert ChainEntry.objects.get(pk=copy).set_aside == SetAside.REPEAT
    code, err = verify_err()
    assert code == 1
    assert err.startswith(
        f"TAMPERED: log entry id {copy} (configuration of {real.subject}) is a copy of an "
        "entry already in the log"
    )


def test_a_set_aside_entry_queued_again_is_set_aside_again(history):
    forged = budget_raised_to_5000()
    placed()
    ChainEntry.objects.filter(pk=forged).update(set_aside="")
    assert placed() == 0
    assert ChainEntry.objects.get(pk=forged).set_aside == SetAside.UNTAGGED


def test_the_tag_of_a_placed_entry_is_never_read_again(history):
    """Its checkpoint holds a placed entry; its tag was checked once, before placing."""
    ChainEntry.objects.filter(kind=EntryKind.VERDICT).update(tag="0" * 64)
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "verify", stdout=out, stderr=io.StringIO())
    assert exited.value.code == 0
    assert "clean:" in out.getvalue()


def test_rotate_key_places_what_is_queued_under_the_key_that_tagged_it(history, settings, tmp_path):
    settings.MAGI_AUDIT_SIGNING_KEY = ""
    settings.VAR_DIR = tmp_path
    keys.signing_key()
    queued = log.append(EntryKind.CONFIGURATION, "nothing 1", {"n": 1})
    out = io.StringIO()
    call_command("audit", "rotate-key", stdout=out)
    assert "placed" in out.getvalue() and "kept for checking" in out.getvalue()
    assert ChainEntry.objects.get(pk=queued.pk).seq is not None


def test_an_entry_tagged_before_a_rotation_and_left_queued_is_set_aside(history, settings):
    """Why a rotation first places the queue: the sequencer checks with the current key
    only (docs/evidence.md)."""
    queued = log.append(EntryKind.CONFIGURATION, "nothing 2", {"n": 2})
    settings.MAGI_AUDIT_SIGNING_KEY = keys.new_seed()
    sequencer.run("s1")
    assert ChainEntry.objects.get(pk=queued.pk).set_aside == SetAside.UNTAGGED


def held_by_another_worker() -> None:
    LogState.objects.update(lease_owner="w9", lease_expires_at="2999-01-01T00:00:00Z")


def test_audit_place_places_the_queue_now_and_says_what_waits(history):
    magi_changes_the_budget(6)
    out = io.StringIO()
    call_command("audit", "place", stdout=out)
    assert out.getvalue().strip() == "placed 1 queued entries"
    magi_changes_the_budget(7)
    held_by_another_worker()
    out = io.StringIO()
    call_command("audit", "place", stdout=out)
    assert out.getvalue().strip() == (
        "placed 0 queued entries; 1 still queued (a worker holds the sequencer's lease, or is "
        "writing)"
    )


def test_rotate_key_refuses_while_entries_stay_queued(history, settings, tmp_path):
    settings.MAGI_AUDIT_SIGNING_KEY = ""
    settings.VAR_DIR = tmp_path
    kid = keys.current_kid()
    log.append(EntryKind.CONFIGURATION, "nothing 3", {"n": 3})
    held_by_another_worker()
    err = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("audit", "rotate-key", stdout=io.StringIO(), stderr=err)
    assert exited.value.code == 2
    assert "log entries are still queued: stop MAGI's workers and web" in err.getvalue()
    assert keys.current_kid() == kid
