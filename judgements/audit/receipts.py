"""A verdict's receipt: what MAGI decided, about which content, with which agents, signed
once when the verdict, an override or a confirmation is put in force, in the same
transaction, and stored as the bytes signed (models/chain.py Receipt). It is served as
stored, with the inclusion proof of the entry it names in the latest checkpoint: nothing
rebuilds a receipt from rows, so a row changed later changes no receipt. The API's
answer, the webhook and `magi gate --json` carry it (outcome/answers.py); `magi verify`
checks it (magi_client/receipts.py); docs/evidence.md describes every field.

The body is built in one place, `body`.
"""

import json
from typing import TypedDict

from judgements.audit import keys, proofs
from judgements.audit.facts import AgentFact, Score
from judgements.core.json_values import JsonValue
from judgements.models import ChainEntry, Checkpoint, Judgement, Receipt
from judgements.models.chain import IN_FORCE_KINDS
from magi_client.canonical import canonical, record_sha256, text_sha256, timestamp
from magi_client.receipts import CURRENT_FORMAT, RECEIPT_FORMAT

# Where attach_inclusions leaves a judgement's receipt's inclusion and statement for
# served().
ATTACHED = "receipt_inclusion"


class Review(TypedDict):
    """The person's review in force: an override or a confirmation."""

    kind: str
    by: str
    at: str
    decision: str
    reason_sha256: str


def review_of(judgement: Judgement) -> Review | None:
    review = judgement.override_or_none or judgement.confirmation_or_none
    if review is None:
        return None
    return {
        "kind": "override" if review is judgement.override_or_none else "confirmation",
        "by": review.by.get_username(),
        "at": timestamp(review.at),
        "decision": review.decision,
        "reason_sha256": text_sha256(review.reason),
    }


class CertificateRef(TypedDict):
    """The certificate the verdict's mark was read against."""

    id: int
    fingerprint: str
    certified: bool
    created_at: str


def certificate_of(judgement: Judgement) -> CertificateRef | None:
    found = judgement.certificate
    if found is None:
        return None
    return {
        "id": found.pk,
        "fingerprint": found.fingerprint,
        "certified": found.certified,
        "created_at": timestamp(found.created_at),
    }


class Record(TypedDict):
    """How many of the judgement's entries came before, and their leaf hashes' SHA-256."""

    entries: int
    sha256: str


def record_of(entry: ChainEntry) -> Record:
    """The judgement's entries written before `entry`: how many, and their leaf hashes'
    SHA-256 (magi_client/canonical.py record_sha256), so a pack cannot leave one out."""
    earlier = ChainEntry.objects.filter(judgement=entry.judgement_id, id__lt=entry.pk)
    hashes = list(earlier.values_list("leaf_hash", flat=True))
    return {"entries": len(hashes), "sha256": record_sha256(hashes)}


class ReceiptDecision(TypedDict):
    """One agent's decision in a round, its reason named by its SHA-256."""

    agent: int
    decision: str
    reason_sha256: str


class ReceiptRound(TypedDict):
    """A round's decisions, by agent."""

    round: int
    decisions: list[ReceiptDecision]


class Mark(TypedDict):
    """The contested mark and the trust set with the verdict."""

    contested: bool | None
    trust: str | None
    contest_reasons: list[JsonValue]


class EntryRef(TypedDict):
    """The log entry that put the verdict in force."""

    kind: str
    leaf_hash: str


class Body(TypedDict):
    """A receipt's signed body (docs/evidence.md; outcome/receipt_answers.py ReceiptBody
    describes it to the API). Stored as canonical(body): only its contents are signed."""

    format: str
    judgement: int
    event: str
    title_sha256: str
    content_sha256: str
    agents: list[AgentFact]
    rounds: list[ReceiptRound]
    scores: list[Score]
    panel_verdict: str
    verdict: str
    review: Review | None
    mark: Mark
    certificate: CertificateRef | None
    at: str
    entry: EntryRef
    record: Record


def body(judgement: Judgement, entry: ChainEntry) -> Body:
    """The receipt's signed body, from the judgement's rows as they are in the
    transaction that puts its verdict in force."""
    agents = list(judgement.agents.all())
    decisions = {agent.position: agent.ordered_decisions() for agent in agents}
    rounds = sorted({d.round for made in decisions.values() for d in made})
    return {
        "format": RECEIPT_FORMAT,
        "judgement": judgement.pk,
        "event": entry.kind,
        "title_sha256": text_sha256(judgement.title),
        "content_sha256": text_sha256(judgement.content),
        "agents": [
            {
                "position": agent.position,
                "name": agent.name,
                "model": agent.model,
                "criteria_sha256": text_sha256(agent.criteria),
            }
            for agent in agents
        ],
        "rounds": [
            {
                "round": number,
                "decisions": [
                    {
                        "agent": position,
                        "decision": d.decision,
                        "reason_sha256": text_sha256(d.reason),
                    }
                    for position, made in decisions.items()
                    for d in made
                    if d.round == number
                ],
            }
            for number in rounds
        ],
        "scores": [
            {
                "agent": a.position,
                "score_tenths": a.final_score_tenths,
                "decision": a.final_decision,
            }
            for a in agents
        ],
        "panel_verdict": str(judgement.status),
        "verdict": str(judgement.verdict),
        "review": review_of(judgement),
        "mark": {
            "contested": judgement.contested,
            "trust": judgement.trust,
            "contest_reasons": list(judgement.contest_reasons),
        },
        "certificate": certificate_of(judgement),
        "at": timestamp(entry.at),
        "entry": {"kind": entry.kind, "leaf_hash": entry.leaf_hash},
        "record": record_of(entry),
    }


def loaded(judgement_id: int) -> Judgement:
    """The judgement with all a receipt and its entry read (agents, their decisions, the
    review, the certificate; its panel, whose escalation engine/lifecycle.py's finish
    reads), in a fixed number of queries: read in the transaction that puts its verdict
    in force, after the change."""
    return (
        Judgement.objects.select_related("panel", "override__by", "confirmation__by", "certificate")
        .prefetch_related("agents__decisions")
        .get(pk=judgement_id)
    )


def make(entry: ChainEntry, judgement: Judgement) -> Receipt:
    """Sign and store the receipt of the verdict `entry` (just appended) put in force,
    from `judgement` as `loaded` read it in the same transaction."""
    if entry.judgement_id != judgement.pk:
        raise ValueError(f"entry {entry.pk} is not about judgement {judgement.pk}")
    signed = canonical(body(judgement, entry))
    signature = keys.signature_of(signed)
    return Receipt.objects.create(
        judgement_id=judgement.pk,
        entry=entry,
        event=entry.kind,
        body=signed.decode("utf-8"),
        kid=signature["kid"],
        signature=signature["value"],
    )


def in_force(judgement: Judgement) -> Receipt | None:
    """The judgement's latest receipt (prefetched by Judgement.objects.with_results(),
    else read): the one of the verdict in force."""
    prefetched = getattr(judgement, "receipts_newest_first", None)
    if prefetched is not None:
        return prefetched[0] if prefetched else None
    return (
        Receipt.objects.select_related("entry")
        .filter(judgement_id=judgement.pk)
        .order_by("-id")
        .first()
    )


class Statement(TypedDict):
    """What the log held about a judgement at a checkpoint's size, as served: the leaf
    hash of its latest entry that put a verdict in force, and how many entries about it
    were placed below that size with their leaf hashes' SHA-256 (record_sha256)."""

    format: str
    judgement: int
    size: int
    in_force: str
    entries: int
    sha256: str


class Current(TypedDict):
    """A statement, signed when served: a receipt proven at that size is the judgement's
    latest there, and a pack holds every entry about it placed below that size."""

    statement: Statement
    signature: keys.Signature


class Served(TypedDict):
    """A receipt as served: its body as stored (parsed), its signature, its inclusion,
    and the signed statement that it was the judgement's latest at the inclusion's size."""

    receipt: Body
    signature: keys.Signature
    inclusion: proofs.Inclusion | None
    current: Current | None


def currents(judgement_ids: list[int], size: int) -> dict[int, Current]:
    """Each judgement's statement at `size` (one query for all), signed now. Read from
    the log's entries placed below `size`, whose leaves `audit verify` checks against
    the signed tree; not from the rows they describe."""
    placed: dict[int, list[tuple[str, str]]] = {}
    rows = ChainEntry.objects.filter(judgement_id__in=judgement_ids, seq__lt=size).order_by("seq")
    for judgement_id, kind, leaf in rows.values_list("judgement_id", "kind", "leaf_hash"):
        placed.setdefault(judgement_id, []).append((kind, leaf))
    found: dict[int, Current] = {}
    for judgement_id, held in placed.items():
        put_in_force = [leaf for kind, leaf in held if kind in IN_FORCE_KINDS]
        if not put_in_force:
            continue
        hashes = [leaf for _, leaf in held]
        statement: Statement = {
            "format": CURRENT_FORMAT,
            "judgement": judgement_id,
            "size": size,
            "in_force": put_in_force[-1],
            "entries": len(hashes),
            "sha256": record_sha256(hashes),
        }
        found[judgement_id] = {
            "statement": statement,
            "signature": keys.signature_of(canonical(statement)),
        }
    return found


def document(
    receipt: Receipt, inclusion: proofs.Inclusion | None, current: Current | None = None
) -> Served:
    """The receipt as served: its body and signature as stored, its inclusion, and the
    statement of its inclusion's size (None while it is not placed)."""
    return {
        "receipt": json.loads(receipt.body),
        "signature": {"alg": "EdDSA", "kid": receipt.kid, "value": receipt.signature},
        "inclusion": inclusion,
        "current": current if inclusion is not None else None,
    }


def served(judgement: Judgement, checkpoint: Checkpoint | None = None) -> Served | None:
    """The signed receipt of the verdict in force with its inclusion proof in the latest
    checkpoint (or `checkpoint`, or the one attach_inclusions found for many at once) and
    its statement there, or None: not decided, an error, or decided before receipts were
    stored (docs/evidence.md)."""
    receipt = in_force(judgement)
    if receipt is None:
        return None
    if hasattr(judgement, ATTACHED):
        inclusion, current = getattr(judgement, ATTACHED)
        return document(receipt, inclusion, current)
    checkpoint = checkpoint or proofs.latest()
    (inclusion,) = proofs.inclusions([receipt.entry.seq], checkpoint)
    if inclusion is None or checkpoint is None:
        return document(receipt, None)
    return document(receipt, inclusion, currents([judgement.pk], checkpoint.size).get(judgement.pk))


def attach_inclusions(judgements: list[Judgement]) -> None:
    """Each judgement's receipt's inclusion proof and statement, for many in a fixed
    number of queries (judgements loaded with_results); served() reads them."""
    found = [(judgement, in_force(judgement)) for judgement in judgements]
    with_receipts = [(j, r) for j, r in found if r is not None]
    checkpoint = proofs.latest() if with_receipts else None
    made = proofs.inclusions([r.entry.seq for _, r in with_receipts], checkpoint)
    proven = {
        judgement.pk: inclusion
        for (judgement, _), inclusion in zip(with_receipts, made, strict=True)
    }
    stated = {} if checkpoint is None else currents(list(proven), checkpoint.size)
    for judgement in judgements:
        setattr(judgement, ATTACHED, (proven.get(judgement.pk), stated.get(judgement.pk)))


__all__ = ["attach_inclusions", "body", "loaded", "make", "served"]
