"""`manage.py audit verify`: the whole chain checked, entry by entry, against itself, its
signatures and the rows it describes, naming the first entry that differs (as AWS
CloudTrail's validate-logs names the first log file changed or missing).

1. Links: every entry in its place (1, 2, 3, ... no gaps), its SHA-256 that of its own
   fields, its prev_sha256 that of the entry before; the head row at the last entry.
2. Rows: each entry against the rows it describes (audit/row_checks.py).
3. Signatures: each signed head checks with a published key and signs a hash the chain
   holds; every verdict and review entry has its signature.
4. Rows without entries: a judgement made after the chain started with no "submitted"
   entry, a decision, a verdict, a review, a certificate or an audit row with none.
"""

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from judgements.audit import chain, keys
from judgements.audit.row_checks import Item, Known, Problem, check_rows
from judgements.models import (
    AuditEntry,
    Certificate,
    ChainEntry,
    ChainHead,
    ChainSignature,
    Confirmation,
    EntryKind,
    Judgement,
    Override,
    RoundDecision,
    Status,
)
from magi_client.canonical import GENESIS_PREV, NotCanonical, canonical, entry_sha256, timestamp
from magi_client.receipts import NotValid, check_signature, keys_of

BATCH = 2000
SIGNED_KINDS = {EntryKind.VERDICT, EntryKind.OVERRIDE, EntryKind.CONFIRMATION}


@dataclass
class Walk:
    """What the walk has seen so far."""

    entries: int = 0
    last_seq: int = 0
    last_sha256: str = GENESIS_PREV
    hashes: dict[int, str] = field(default_factory=dict)
    signed_seqs: set[int] = field(default_factory=set)
    genesis: dict[str, Any] | None = None
    genesis_at: Any = None
    seen: dict[str, set[Any]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def saw(self, kind: str, key: Any) -> None:
        self.seen.setdefault(kind, set()).add(key)


@dataclass(frozen=True)
class Report:
    entries: int
    problems: list[Problem]
    judgements_before: int

    @property
    def clean(self) -> bool:
        return not self.problems


def verify() -> Report:
    walk = Walk()
    known = known_from_chain()
    batch: list[Item] = []
    for entry in entries():
        item = check_links(walk, entry)
        if item is not None:
            batch.append(item)
        if len(batch) >= BATCH:
            walk.problems += check_rows(batch, known)
            batch = []
    walk.problems += check_rows(batch, known)
    check_head(walk)
    walk.problems += check_signatures(walk)
    walk.problems += rows_without_entries(walk)
    walk.problems.sort(key=lambda problem: (problem.seq is None, problem.seq or 0))
    before = (walk.genesis or {}).get("judgements_before", 0)
    return Report(walk.entries, walk.problems, before if isinstance(before, int) else 0)


def entries() -> Iterator[ChainEntry]:
    """Every entry in order of its place, a batch of rows at a time."""
    last = -1
    while True:
        rows = list(ChainEntry.objects.filter(seq__gt=last).order_by("seq")[:BATCH])
        yield from rows
        if len(rows) < BATCH:
            return
        last = rows[-1].seq


def known_from_chain() -> Known:
    """The certificates' panels and the panels deleted, as the chain itself records them."""
    known = Known()
    for kind, payload in ChainEntry.objects.filter(
        kind__in=[EntryKind.CERTIFICATE, EntryKind.CONFIGURATION]
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


def check_links(walk: Walk, entry: ChainEntry) -> Item | None:
    """The entry's place, hash and link; its parsed payload, or None when it cannot be read."""
    walk.entries += 1
    expected = walk.last_seq + 1
    if entry.seq != expected:
        walk.problems.append(
            Problem(
                expected,
                f"missing: the chain jumps from entry {walk.last_seq} to entry {entry.seq} "
                "(entries were deleted)",
            )
        )
    try:
        payload = json.loads(entry.payload)
        if not isinstance(payload, dict) or canonical(payload).decode() != entry.payload:
            raise ValueError("not canonical")
        body = {
            "seq": entry.seq,
            "kind": entry.kind,
            "subject": entry.subject,
            "at": timestamp(entry.at),
            "payload": payload,
            "prev_sha256": entry.prev_sha256,
        }
        digest = entry_sha256(body)
    except (ValueError, NotCanonical):
        walk.problems.append(Problem(entry.seq, "its payload is not canonical JSON: it was edited"))
        payload, digest = None, ""
    if payload is not None and digest != entry.sha256:
        walk.problems.append(
            Problem(
                entry.seq,
                f"{entry.kind} of {entry.subject}: its SHA-256 does not match its contents "
                "(the entry was edited, or moved from another place)",
            )
        )
    if entry.prev_sha256 != walk.last_sha256 and entry.seq == expected:
        walk.problems.append(
            Problem(
                entry.seq,
                f"{entry.kind} of {entry.subject}: it does not follow entry {walk.last_seq} "
                "(its prev_sha256 names another entry: entries were reordered or rewritten)",
            )
        )
    walk.last_seq, walk.last_sha256 = entry.seq, entry.sha256
    walk.hashes[entry.seq] = entry.sha256
    if payload is None:
        return None
    note_entry(walk, entry, payload)
    return entry, payload


def note_entry(walk: Walk, entry: ChainEntry, payload: dict[str, Any]) -> None:
    if entry.kind == EntryKind.GENESIS:
        if walk.genesis is not None:
            walk.problems.append(Problem(entry.seq, "a second genesis entry"))
        walk.genesis, walk.genesis_at = payload, entry.at
    elif entry.kind == EntryKind.DECISION:
        walk.saw(entry.kind, (payload.get("judgement"), payload.get("agent"), payload.get("round")))
    elif entry.kind in (EntryKind.CERTIFICATE, EntryKind.CERTIFICATE_VOIDED):
        walk.saw(entry.kind, payload.get("certificate"))
    elif entry.kind == EntryKind.CONFIGURATION:
        walk.saw(entry.kind, payload.get("audit_entry"))
    else:
        walk.saw(entry.kind, payload.get("judgement"))
    if entry.kind in SIGNED_KINDS:
        walk.saw("signed", entry.seq)


def check_head(walk: Walk) -> None:
    head = ChainHead.objects.filter(pk=chain.HEAD_ID).first()
    at, digest = (0, "") if head is None else (head.seq, head.sha256)
    if at != walk.last_seq or (at and digest != walk.last_sha256):
        walk.problems.append(
            Problem(
                walk.last_seq + 1 if at > walk.last_seq else walk.last_seq,
                f"the chain ends at entry {walk.last_seq} but its head is at entry {at}: "
                "entries at its end were deleted or rewritten",
            )
        )


def check_signatures(walk: Walk) -> list[Problem]:
    try:
        public = keys_of(keys.jwks())
    except (NotValid, keys.KeyRefused) as exc:
        return [Problem(None, f"the signing keys cannot be read: {exc}")]
    problems, signed = [], set()
    for row in ChainSignature.objects.order_by("seq", "pk"):
        signed.add(row.seq)
        if walk.hashes.get(row.seq) != row.sha256:
            problems.append(
                Problem(row.seq, "its signed head names a hash the chain does not hold")
            )
            continue
        document = {
            "head": chain.head_body(row.seq, row.sha256),
            "signature": {"alg": "EdDSA", "kid": row.kid, "value": row.signature},
        }
        try:
            check_signature(document, "head", public)
        except NotValid as exc:
            problems.append(Problem(row.seq, f"forged signature: {exc}"))
    for seq in sorted(walk.seen.get("signed", set()) - signed):
        problems.append(Problem(seq, "its signature of the chain's head is gone"))
    return problems


def rows_without_entries(walk: Walk) -> list[Problem]:
    """Rows made after the chain started that no entry describes."""
    if walk.genesis is None:
        return []
    before, since = walk.genesis.get("judgements_before", 0), walk.genesis_at
    seen = walk.seen
    later = Judgement.objects.filter(pk__gt=before)
    missing: list[tuple[str, Any]] = []
    missing += [
        ("submitted", pk)
        for pk in later.values_list("pk", flat=True)
        if pk not in seen.get(EntryKind.SUBMITTED, set())
    ]
    decided = later.filter(status__in=[Status.APPROVED, Status.REJECTED]).values_list(
        "pk", flat=True
    )
    missing += [("verdict", pk) for pk in decided if pk not in seen.get(EntryKind.VERDICT, set())]
    decisions = RoundDecision.objects.filter(agent__judgement__pk__gt=before).values_list(
        "agent__judgement_id", "agent__position", "round"
    )
    missing += [
        ("decision", key) for key in decisions if key not in seen.get(EntryKind.DECISION, set())
    ]
    for kind, model in ((EntryKind.OVERRIDE, Override), (EntryKind.CONFIRMATION, Confirmation)):
        reviewed = model.objects.filter(at__gte=since).values_list("judgement_id", flat=True)
        missing += [(kind, pk) for pk in reviewed if pk not in seen.get(kind, set())]
    made = Certificate.objects.filter(created_at__gte=since).values_list("pk", flat=True)
    missing += [
        ("certificate", pk) for pk in made if pk not in seen.get(EntryKind.CERTIFICATE, set())
    ]
    audited = AuditEntry.objects.filter(at__gte=since).values_list("pk", flat=True)
    missing += [
        ("configuration", pk)
        for pk in audited
        if pk not in seen.get(EntryKind.CONFIGURATION, set())
    ]
    return [
        Problem(
            None,
            f"no {kind} entry for {what_of(kind, key)}: its row was added, or its entry "
            "removed, outside MAGI",
        )
        for kind, key in missing
    ]


def what_of(kind: str, key: Any) -> str:
    if kind == "decision":
        return f"judgement {key[0]}, agent {key[1]}, round {key[2]}"
    if kind == "certificate":
        return f"certificate {key}"
    if kind == "configuration":
        return f"audit row {key}"
    return f"judgement {key}"
