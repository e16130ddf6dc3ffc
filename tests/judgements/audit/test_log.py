"""Appending to the audit log: an entry is queued with its leaf hash in the caller's
transaction, the first submission starts the log with its genesis, threads appending at
once never wait on each other and lose nothing, and an append never changes the row it
describes (judgements/audit/log.py). With processes on PostgreSQL:
tests/durability/test_audit_chain_postgres.py."""

import json
import threading

import pytest
from django.db import connection, transaction

from judgements.audit import log, receipts, record, verification
from judgements.configuration import teams
from judgements.models import ChainEntry, EntryKind, Judgement, LogState, Team
from judgements.models.chain import INSERT_BATCH
from magi_client.canonical import entry_leaf, leaf_hash, timestamp
from tests.support.audit_history import placed

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_entry_is_queued_with_the_hash_of_its_leaf(make_judgement):
    judgement = make_judgement()
    with transaction.atomic():
        entry = log.append(EntryKind.CONFIGURATION, "team 1", {"audit_entry": 1}, judgement.pk)
    assert entry.seq is None
    leaf = entry_leaf(
        "configuration", "team 1", judgement.pk, timestamp(entry.at), {"audit_entry": 1}
    )
    assert entry.leaf_hash == leaf_hash(leaf)
    assert entry.payload == '{"audit_entry":1}'


def test_entries_appended_at_once_are_stored_as_given_in_the_order_given(make_judgement):
    """More than one INSERT's worth (models/chain.py INSERT_BATCH): each row read back is
    the entry given, its leaf hash the hash of what is stored, ids in the order given."""
    judgement = make_judgement()
    given = [
        log.Entry(EntryKind.CONFIGURATION, f"team {n}", {"n": n, "text": "é\n\u2028"}, judgement.pk)
        for n in range(INSERT_BATCH + 5)
    ]
    with transaction.atomic():
        made = log.append_many(given)
    assert [row.pk for row in made] == sorted(row.pk for row in made)
    stored = {row.pk: row for row in ChainEntry.objects.filter(pk__in=[row.pk for row in made])}
    for entry, row in zip(given, made, strict=True):
        again = stored[row.pk]
        assert (again.kind, again.subject, again.judgement_id, again.at, again.seq) == (
            entry.kind, entry.subject, judgement.pk, row.at, None,
        )  # fmt: skip
        assert json.loads(again.payload) == entry.payload
        leaf = entry_leaf(
            again.kind, again.subject, judgement.pk, timestamp(again.at), entry.payload
        )
        assert again.leaf_hash == row.leaf_hash == leaf_hash(leaf)


def test_the_first_submission_starts_the_log_with_its_genesis(make_judgement):
    before = make_judgement()
    ChainEntry.objects.all().delete()
    LogState.objects.all().delete()
    make_judgement()
    genesis = ChainEntry.objects.order_by("id")[0]
    assert genesis.kind == "genesis"
    assert json.loads(genesis.payload)["judgements_before"] == before.pk
    assert LogState.objects.get().origin.startswith("magi.invalid/")


def test_an_entry_rolled_back_with_its_change_leaves_no_trace(make_judgement):
    make_judgement()
    count = ChainEntry.objects.count()
    with pytest.raises(RuntimeError), transaction.atomic():
        log.append(EntryKind.CONFIGURATION, "team 1", {"audit_entry": 1})
        raise RuntimeError("the change failed")
    assert ChainEntry.objects.count() == count


def test_threads_appending_at_once_lose_nothing_and_make_one_log(make_judgement, django_user_model):
    """Four threads, each changing its own team's members 25 times: 100 audited changes,
    placed after by the sequencer in one tree that checks clean."""
    make_judgement()
    start = ChainEntry.objects.count()
    people = [django_user_model.objects.create_user(f"member{n}") for n in range(2)]
    teams_made = [Team.objects.create(name=f"team {n}") for n in range(4)]

    def change_many(team: Team) -> None:
        try:
            for number in range(25):
                teams.set_members(team, people[: 1 + number % 2], None)
        finally:
            connection.close()

    threads = [threading.Thread(target=change_many, args=(team,)) for team in teams_made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert placed() == start + 100
    seqs = list(ChainEntry.objects.values_list("seq", flat=True))
    assert seqs == list(range(start + 100))
    report = verification.verify(verification.trust_beside_the_data())
    assert report.clean, [str(p) for p in report.problems]


def test_an_append_only_reads_the_rows_it_describes(fake_llm, settings):
    from tests.support.audit_history import judge_one

    settings.MAGI_RATE_LIMIT_PER_USER = 0
    judgement = judge_one("w1", None, "Japan next week.")
    rows = Judgement.objects.filter(pk=judgement)
    before = rows.values().get()
    with transaction.atomic():
        record.verdict(receipts.loaded(judgement))
    assert rows.values().get() == before
    verdicts = ChainEntry.objects.filter(judgement_id=judgement, kind="verdict")
    first, again = verdicts.values_list("payload", flat=True)
    assert first == again
