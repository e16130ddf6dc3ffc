"""A verdict's signed receipt: what MAGI says it decided, about which content, with which
agents, signed so that anyone with the published keys can check it offline (`magi
verify`, magi_client/receipts.py). The API's answer, the webhook and `magi gate --json`
carry it (outcome/answers.py); docs/evidence.md describes every field.

The receipt names the judgement's latest entry that put a verdict in force (the verdict,
a confirmation or an override) and is dated by it, so the same history always gives the
same receipt. A judgement without such an entry (not decided, or decided before the
chain started) has none.
"""

from typing import Any

from judgements.audit import keys
from judgements.models import ChainEntry, Judgement, Status
from judgements.models.chain import IN_FORCE_KINDS
from magi_client.canonical import text_sha256, timestamp
from magi_client.receipts import RECEIPT_FORMAT

DECIDED = (Status.APPROVED, Status.REJECTED)


def entry_in_force(judgement: Judgement) -> ChainEntry | None:
    """The judgement's latest entry that put a verdict in force (prefetched by
    Judgement.objects.with_results(), else read)."""
    prefetched = getattr(judgement, "entries_in_force", None)
    if prefetched is not None:
        return prefetched[0] if prefetched else None
    return (
        ChainEntry.objects.filter(judgement_id=judgement.pk, kind__in=IN_FORCE_KINDS)
        .order_by("-seq")
        .first()
    )


def review_of(judgement: Judgement) -> dict[str, Any] | None:
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


def certificate_of(judgement: Judgement) -> dict[str, Any] | None:
    found = judgement.certificate
    if found is None:
        return None
    return {
        "id": found.pk,
        "fingerprint": found.fingerprint,
        "certified": found.certified,
        "created_at": timestamp(found.created_at),
    }


def body(judgement: Judgement, entry: ChainEntry) -> dict[str, Any]:
    """The receipt's signed body, from a judgement loaded with its results
    (Judgement.objects.with_results())."""
    agents = list(judgement.agents.all())
    decisions = {agent.position: agent.ordered_decisions() for agent in agents}
    rounds = sorted({d.round for made in decisions.values() for d in made})
    return {
        "format": RECEIPT_FORMAT,
        "judgement": judgement.pk,
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
        "chain": {"seq": entry.seq, "entry_sha256": entry.sha256, "kind": entry.kind},
    }


def signed(judgement: Judgement) -> dict[str, Any] | None:
    """The signed receipt of a decided judgement, or None (docs/evidence.md)."""
    if judgement.status not in DECIDED:
        return None
    entry = entry_in_force(judgement)
    if entry is None:
        return None
    receipt = body(judgement, entry)
    return {"receipt": receipt, "signature": keys.sign(receipt)}
