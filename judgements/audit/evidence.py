"""One judgement's evidence pack: everything a third party needs to check what MAGI
decided about it, offline, as one JSON document (format magi-evidence/1, docs/evidence.md):
the content, every prompt sent and reply received (its attempts and checks), the
decisions, the review, the signed receipt, the judgement's chain entries and the signed
heads at its verdict and review. `magi verify PACK --keys KEYS` checks it
(magi_client/receipts.py's check_pack)."""

import json
from typing import Any

from judgements.audit import keys, receipts
from judgements.models import ChainEntry, ChainSignature, Judgement
from magi_client.canonical import timestamp
from magi_client.receipts import PACK_FORMAT

CALL_FIELDS = (
    "attempt", "model", "provider", "base_url", "request", "response_text", "error",
    "duration_ms", "prompt_tokens", "completion_tokens", "cached_tokens",
)  # fmt: skip


def call_of(row: Any) -> dict[str, Any]:
    """A model call as stored (an agent's attempt or a check's), every prompt and reply."""
    return {name: getattr(row, name) for name in CALL_FIELDS} | {
        "started_at": timestamp(row.started_at)
    }


def agents_of(judgement: Judgement) -> list[dict[str, Any]]:
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
                {"round": a.round, "outcome": a.outcome} | call_of(a)
                for a in agent.attempts.order_by("round", "attempt", "pk")
            ],
        }
        for agent in judgement.agents.all()
    ]


def checks_of(judgement: Judgement) -> list[dict[str, Any]]:
    found = judgement.checks.select_related("agent").order_by("started_at", "pk")
    return [
        {
            "kind": check.kind,
            "agent": None if check.agent is None else check.agent.position,
            "decision": check.decision,
            "p_approve": check.p_approve,
            "steered": check.steered,
        }
        | call_of(check)
        for check in found
    ]


def review_of(judgement: Judgement) -> dict[str, Any] | None:
    review = receipts.review_of(judgement)
    found = judgement.override_or_none or judgement.confirmation_or_none
    return None if review is None or found is None else review | {"reason": found.reason}


def entries_of(judgement_id: int) -> list[dict[str, Any]]:
    return [
        {
            "seq": entry.seq,
            "kind": entry.kind,
            "subject": entry.subject,
            "at": timestamp(entry.at),
            "payload": json.loads(entry.payload),
            "prev_sha256": entry.prev_sha256,
            "sha256": entry.sha256,
        }
        for entry in ChainEntry.objects.filter(judgement_id=judgement_id).order_by("seq")
    ]


def signatures_at(seqs: list[int]) -> list[dict[str, Any]]:
    return [
        {"seq": row.seq, "sha256": row.sha256, "kid": row.kid, "value": row.signature}
        for row in ChainSignature.objects.filter(seq__in=seqs).order_by("seq", "pk")
    ]


def pack(judgement: Judgement, *, with_levels: bool = True) -> dict[str, Any]:
    """The pack of a judgement loaded with its results (Judgement.objects.with_results()).
    `levels`: the other levels of its escalation story (docs/escalation.md), each a whole
    pack of its own that `magi verify` checks alike; empty for a judgement that never
    escalated."""
    entries = entries_of(judgement.pk)
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
        "verdict": judgement.verdict,
        "agents": agents_of(judgement),
        "checks": checks_of(judgement),
        "review": review_of(judgement),
        "receipt": receipts.signed(judgement),
        "entries": entries,
        "head_signatures": signatures_at([entry["seq"] for entry in entries]),
        # For convenience only: a checker takes the keys from MAGI's published address.
        "keys": keys.jwks(),
        "level": judgement.level,
        "levels": [pack(level, with_levels=False) for level in others.order_by("level")],
    }
