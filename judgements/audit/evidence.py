"""One judgement's evidence pack: everything a third party needs to check what MAGI
decided about it, offline, as one JSON document (format magi-evidence/2, docs/evidence.md):
the content, every prompt sent and reply received (its attempts and checks), the
decisions, the mark, the review, the signed receipt, and every log entry about the
judgement with its inclusion proof in the latest checkpoint. `magi verify PACK --keys
KEYS` checks it field by field (magi_client/packs.py)."""

import json
from typing import TypedDict

from judgements.audit import facts, keys, log, proofs, receipts, record
from judgements.core.json_values import JsonValue
from judgements.models import ChainEntry, Checkpoint, Judgement
from magi_client.canonical import timestamp
from magi_client.receipts import PACK_FORMAT


class PackDecision(TypedDict):
    round: int
    decision: str
    reason: str
    missing: list[JsonValue]
    p_approve: float | None


class PackAgent(TypedDict):
    """An agent with its criteria, decisions and every call, as written."""

    position: int
    name: str
    model: str
    criteria: str
    final_decision: str | None
    score_tenths: int | None
    decisions: list[PackDecision]
    attempts: list[facts.AttemptCall]


def agents_of(judgement: Judgement) -> list[PackAgent]:
    return [
        {
            "position": agent.position,
            "name": agent.name,
            "model": agent.model,
            "criteria": agent.criteria,
            "final_decision": agent.final_decision,
            "score_tenths": agent.final_score_tenths,
            "decisions": [
                {
                    "round": d.round,
                    "decision": d.decision,
                    "reason": d.reason,
                    "missing": list(d.missing),
                    "p_approve": d.p_approve,
                }
                for d in agent.ordered_decisions()
            ],
            "attempts": [
                record.attempt_call(a) for a in agent.attempts.order_by("round", "attempt", "pk")
            ],
        }
        for agent in judgement.agents.all()
    ]


class PackCheck(facts.Call):
    """A check's finding, then its call (those keys first, as written)."""

    kind: str
    agent: int | None
    decision: str | None
    p_approve: float | None
    steered: bool | None


def checks_of(judgement: Judgement) -> list[PackCheck]:
    found = judgement.checks.select_related("agent").order_by("started_at", "pk")
    return [
        {
            "kind": check.kind,
            "agent": None if check.agent is None else check.agent.position,
            "decision": check.decision,
            "p_approve": check.p_approve,
            "steered": check.steered,
            **record.call_of(check),
        }
        for check in found
    ]


class PackReview(receipts.Review):
    """The receipt's review with the reason in words."""

    reason: str


def review_of(judgement: Judgement) -> PackReview | None:
    review = receipts.review_of(judgement)
    found = judgement.override_or_none or judgement.confirmation_or_none
    return None if review is None or found is None else {**review, "reason": found.reason}


class PackEntry(TypedDict):
    """A log entry: its leaf, leaf hash, place and inclusion proof (None: not placed)."""

    index: int | None
    leaf: dict[str, object]
    leaf_hash: str
    proof: list[str] | None


def entries_of(judgement_id: int, checkpoint: Checkpoint | None) -> list[PackEntry]:
    """Every entry about the judgement, in the order written, each as its leaf with its
    leaf hash, its place, and its inclusion proof in `checkpoint` (None: not placed yet)."""
    rows = list(ChainEntry.objects.filter(judgement_id=judgement_id).order_by("id"))
    proven = proofs.inclusions([row.seq for row in rows], checkpoint)
    return [
        {
            "index": row.seq,
            "leaf": log.leaf_of(row, json.loads(row.payload)),
            "leaf_hash": row.leaf_hash,
            "proof": None if inclusion is None else inclusion["proof"],
        }
        for row, inclusion in zip(rows, proven, strict=True)
    ]


class Pack(TypedDict):
    """An evidence pack (format magi-evidence/2, docs/evidence.md)."""

    format: str
    judgement: int
    title: str
    content: str
    created_at: str
    status: str
    verdict: str
    escalated: bool
    mark: receipts.Mark
    certificate: receipts.CertificateRef | None
    agents: list[PackAgent]
    checks: list[PackCheck]
    review: PackReview | None
    receipt: receipts.Served | None
    checkpoint: str | None
    entries: list[PackEntry]
    keys: keys.Jwks
    level: int
    levels: list["Pack"]


def pack(judgement: Judgement, *, with_levels: bool = True) -> Pack:
    """The pack of a judgement loaded with its results (Judgement.objects.with_results()).
    `levels`: the other levels of its escalation story (docs/escalation.md), each a whole
    pack of its own that `magi verify` checks alike; empty for a judgement that never
    escalated."""
    checkpoint = proofs.latest()
    certificate = receipts.certificate_of(judgement)
    story = judgement.story() if with_levels else [judgement]
    others = Judgement.objects.with_results().filter(
        pk__in=[level.pk for level in story if level.pk != judgement.pk]
    )
    return {
        "format": PACK_FORMAT,
        "judgement": judgement.pk,
        "title": judgement.title,
        "content": judgement.content,
        "created_at": timestamp(judgement.created_at),
        "status": judgement.status,
        # The story's verdict in force (docs/escalation.md): a level that escalated
        # signed `judging`, and the pack's levels hold the one in force.
        "verdict": judgement.verdict,
        "escalated": judgement.escalated,
        "mark": {
            "contested": judgement.contested,
            "trust": judgement.trust,
            "contest_reasons": list(judgement.contest_reasons),
        },
        "certificate": certificate,
        "agents": agents_of(judgement),
        "checks": checks_of(judgement),
        "review": review_of(judgement),
        # Proven in the pack's own checkpoint, whose statement counts the pack's entries.
        "receipt": receipts.served(judgement, checkpoint),
        "checkpoint": None if checkpoint is None else checkpoint.note,
        "entries": entries_of(judgement.pk, checkpoint),
        # For convenience only: a checker takes the keys from MAGI's published address.
        "keys": keys.jwks(),
        "level": judgement.level,
        "levels": [pack(level, with_levels=False) for level in others.order_by("level")],
    }
