"""`manage.py audit verify`: the whole log checked against itself, its checkpoints, the
keys the checker trusts, a checkpoint kept outside the database, and the rows it
describes, naming the first entry that differs (as AWS CloudTrail's validate-logs names
the first digest or log file changed or missing).

1. The tree (audit/tree_checks.py): every leaf hashes what its row says, places run
   0, 1, 2 ... up to the log's size, the stored subtrees and every checkpoint's root are
   those the leaves make, each checkpoint is signed by a trusted key; a kept checkpoint
   (--checkpoint) is a prefix of the log.
2. Rows: each entry against the rows it describes (audit/row_checks.py).
3. Receipts: each signed by a trusted key, naming its entry, saying what it says; each
   judgement's latest one what its rows say now (audit/receipt_checks.py).
4. Rows without entries, by id (audit/coverage.py), and what the caller adds (the live
   configuration against its last audited state: configuration/live_state.py).

A queued entry counts only if a MAGI process queued it (its tag checks with this
server's key, audit/sequencer.py made_by_magi) and it is no copy of one in the log; every
other, and every entry the sequencer set aside, is named, and describes nothing.

The keys trusted are those given (--keys), or else this server's own, read beside the
data (its settings and var/), which the report says.
"""

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from judgements.audit import keys as signing
from judgements.audit.coverage import Seen, rows_without_entries
from judgements.audit.receipt_checks import check_receipts
from judgements.audit.row_checks import Item, Known, Problem, check_rows
from judgements.audit.sequencer import Queued, screened
from judgements.audit.tree_checks import (
    TreeWalk,
    add_batch,
    check_checkpoints,
    check_kept,
    entries,
    parsed,
)
from judgements.models import ChainEntry, Checkpoint, EntryKind, LogState, SetAside
from magi_client import checkpoints
from magi_client.receipts import NotValid, trusted_keys

Extra = Callable[[], list[Problem]]


@dataclass(frozen=True)
class Trust:
    """The keys a check trusts, and where they came from, in words."""

    keys: Mapping[str, Ed25519PublicKey]
    source: str
    refused: list[str] = field(default_factory=list)


def trust_given(jwks: object, source: str) -> Trust:
    """The keys of a JWK set the checker gave (retired ones only if a trusted key signed
    their retirement). NotValid when it is not a JWK set."""
    found = trusted_keys(jwks)
    return Trust(found.keys, source, found.refused)


def trust_beside_the_data() -> Trust:
    """This server's own keys: its signing key and the retired keys in its settings and
    var/, beside the data they check."""
    try:
        found = trusted_keys(signing.jwks())
    except (NotValid, signing.KeyRefused) as exc:
        return Trust({}, f"none: the server's keys cannot be read ({exc})")
    source = (
        "this server's own signing key and retired keys (its settings and var/), read beside "
        "the data: give --keys with keys you hold to check against them instead"
    )
    return Trust(found.keys, source, found.refused)


@dataclass(frozen=True)
class Report:
    entries: int
    queued: int
    problems: list[Problem]
    judgements_before: int
    keys: str
    refused_keys: list[str]

    @property
    def clean(self) -> bool:
        return not self.problems


def known_from_log() -> Known:
    """The certificates' panels and the panels deleted, as the log itself records them."""
    known = Known()
    for kind, payload in ChainEntry.objects.filter(
        kind__in=[EntryKind.CERTIFICATE, EntryKind.CONFIGURATION], set_aside=""
    ).values_list("kind", "payload"):
        try:
            said = json.loads(payload)
        except ValueError:
            continue  # the walk names it
        if kind == EntryKind.CERTIFICATE and isinstance(said.get("certificate"), int):
            known.certificate_panels[said["certificate"]] = said.get("panel")
        elif said.get("subject") == "panel" and said.get("after") is None:
            target = str(said.get("target", "")).split()
            if len(target) > 1 and target[1].isdecimal():
                known.deleted_panels.add(int(target[1]))
    return known


def note(items: list[Item], seen: Seen) -> None:
    for entry, payload in items:
        if entry.kind == EntryKind.GENESIS:
            if not entry.prev_sha256:
                seen.genesis = payload
        elif entry.kind in (EntryKind.DECISION, EntryKind.ATTEMPT):
            seen.saw(
                entry.kind, (payload.get("judgement"), payload.get("agent"), payload.get("round"))
            )
        elif entry.kind in (EntryKind.CERTIFICATE, EntryKind.CERTIFICATE_VOIDED):
            seen.saw(entry.kind, payload.get("certificate"))
        elif entry.kind == EntryKind.CONFIGURATION:
            seen.saw(entry.kind, payload.get("audit_entry"))
        else:
            seen.saw(entry.kind, payload.get("judgement"))


def queued_items(queued: list[ChainEntry], walk: TreeWalk) -> list[Item]:
    """The queued entries MAGI queued, with their payloads; every other one named."""
    by_id = {row.pk: row for row in queued}
    waiting, refused = screened([Queued.of(row) for row in queued if not row.set_aside])
    refused += [(Queued.of(row), SetAside(row.set_aside)) for row in queued if row.set_aside]
    walk.problems += [refusal(row, why) for row, why in sorted(refused)]
    return [item for item in (parsed(by_id[row.id], walk) for row in waiting) if item is not None]


def refusal(row: Queued, why: SetAside) -> Problem:
    what = f"log entry id {row.id} ({row.kind} of {row.subject})"
    if why == SetAside.REPEAT:
        said = "is a copy of an entry already in the log"
    else:
        said = "was queued without MAGI's key: its tag does not check"
    return Problem(
        None,
        f"{what} {said}; it is set aside, never placed or signed, and describes nothing (it "
        "was written into the database outside MAGI)",
    )


def verify(trust: Trust, kept: str | None = None, extra: Sequence[Extra] = ()) -> Report:
    """Check everything; `kept`: a checkpoint kept outside the database, as text."""
    state = LogState.objects.filter(pk=1).first()
    walk, seen, known = TreeWalk(), Seen(), known_from_log()
    walk.wanted = set(Checkpoint.objects.values_list("size", flat=True))
    outside = None
    if kept is not None:
        try:
            outside = checkpoints.checked(kept, trust.keys)
            walk.wanted.add(outside.size)
        except checkpoints.BadCheckpoint as exc:
            walk.problems.append(Problem(None, f"the kept checkpoint: {exc}"))
    count = 0
    for rows in entries():
        items = add_batch(rows, walk)
        count += len(rows)
        note(items, seen)
        walk.problems += check_rows(items, known)
    queued = list(ChainEntry.objects.filter(seq__isnull=True).order_by("id"))
    items = queued_items(queued, walk)
    note(items, seen)
    walk.problems += check_rows(items, known)
    check_checkpoints(walk, state, dict(trust.keys))
    if outside is not None:
        check_kept(walk, outside, state)
    walk.problems += check_receipts(trust.keys)
    walk.problems += rows_without_entries(seen, known)
    for more in extra:
        walk.problems += more()
    walk.problems.sort(key=lambda problem: (problem.seq is None, problem.seq or 0))
    before = (seen.genesis or {}).get("judgements_before", 0)
    return Report(
        count, len(queued), walk.problems, before if isinstance(before, int) else 0,
        trust.source, trust.refused,
    )  # fmt: skip
