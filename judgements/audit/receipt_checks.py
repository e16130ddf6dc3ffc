"""The stored receipts checked, for `audit verify` (audit/verification.py): each is the
canonical JSON it was signed as, signed by a trusted key, names the entry it was made
with and says what that entry says; every entry that put a verdict in force has its
receipt; and each judgement's latest receipt still says what its rows say now."""

import json
from collections.abc import Mapping

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from judgements.audit.row_checks import Problem
from judgements.core.json_values import JsonObject
from judgements.models import ChainEntry, Judgement, Receipt, Status
from judgements.models.chain import IN_FORCE_KINDS
from magi_client.canonical import NotCanonical, canonical
from magi_client.receipts import NotValid, check_signature

# What a receipt says, by the name its entry gives the same fact.
VERDICT_FACTS = {"panel_verdict": "status", "contested": "contested", "trust": "trust"}


def said_by_entry(body: JsonObject, payload: JsonObject) -> str | None:
    """What of the receipt disagrees with its entry's payload, in words; None: nothing.
    Both as parsed from the database: what they hold is what is being checked."""
    mark = body.get("mark")
    mark = mark if isinstance(mark, Mapping) else {}
    if body.get("event") == "verdict":
        if body.get("panel_verdict") != payload.get("status"):
            return "its verdict is not its entry's"
        if body.get("scores") != payload.get("scores"):
            return "its scores are not its entry's"
        if [mark.get(k) for k in ("contested", "trust", "contest_reasons")] != [
            payload.get(k) for k in ("contested", "trust", "contest_reasons")
        ]:
            return "its mark is not its entry's"
        return None
    review = body.get("review")
    review = review if isinstance(review, Mapping) else {}
    decision = payload.get("decision", review.get("decision"))
    if (
        review.get("reason_sha256") != payload.get("reason_sha256")
        or review.get("decision") != decision
    ):
        return "its review is not its entry's"
    return None


def check_one(
    receipt: Receipt, keys: Mapping[str, Ed25519PublicKey]
) -> tuple[str | None, JsonObject | None]:
    """What is wrong with one stored receipt, and its body when it reads."""
    try:
        body = json.loads(receipt.body)
        if not isinstance(body, dict) or canonical(body).decode() != receipt.body:
            return "its body is not the canonical JSON it was signed as", None
        document = {
            "receipt": body,
            "signature": {"alg": "EdDSA", "kid": receipt.kid, "value": receipt.signature},
        }
        check_signature(document, "receipt", keys)
    except (ValueError, NotCanonical):
        return "its body is not JSON", None
    except NotValid as exc:
        return str(exc), body
    entry = ChainEntry.objects.filter(pk=receipt.entry_id).first()
    named = body.get("entry")
    named = named if isinstance(named, dict) else {}
    if body.get("judgement") != receipt.judgement_id:
        return "it is another judgement's", body
    if (
        entry is None
        or named.get("leaf_hash") != entry.leaf_hash
        or body.get("event") != entry.kind
    ):
        return "it does not name the entry it was made with", body
    return said_by_entry(body, json.loads(entry.payload)), body


def check_receipts(keys: Mapping[str, Ed25519PublicKey]) -> list[Problem]:
    problems, latest = [], {}
    for receipt in Receipt.objects.order_by("id").iterator(chunk_size=2000):
        wrong, body = check_one(receipt, keys)
        if wrong is not None:
            problems.append(
                Problem(None, f"receipt {receipt.pk} of judgement {receipt.judgement_id}: {wrong}")
            )
        if body is not None:
            latest[receipt.judgement_id] = body
    with_receipts = set(Receipt.objects.values_list("entry_id", flat=True))
    in_force = ChainEntry.objects.filter(kind__in=IN_FORCE_KINDS, prev_sha256="").exclude(
        pk__in=with_receipts
    )
    problems += [
        Problem(entry.seq, f"{entry.kind} of {entry.subject}: its receipt is gone")
        for entry in in_force.order_by("id")
    ]
    return problems + receipts_against_rows(latest)


def receipts_against_rows(latest: dict[int, JsonObject]) -> list[Problem]:
    """Each judgement's latest receipt against its rows now: a status flipped or a review
    added, changed or removed since shows here (the receipt is what was signed)."""
    problems = []
    found = Judgement.objects.select_related("override", "confirmation").in_bulk(list(latest))
    for judgement_id, body in sorted(latest.items()):
        judgement = found.get(judgement_id)
        if judgement is None:
            problems.append(
                Problem(
                    None, f"judgement {judgement_id} has a receipt but is gone from the database"
                )
            )
        elif (str(judgement.status), signed_in_force(judgement)) != (
            body.get("panel_verdict"),
            body.get("verdict"),
        ):
            problems.append(
                Problem(
                    None,
                    f"judgement {judgement_id}: its receipt says {body.get('panel_verdict')!r} "
                    f"(in force {body.get('verdict')!r}), the database "
                    f"{str(judgement.status)!r} (in force {signed_in_force(judgement)!r})",
                )
            )
    return problems


def signed_in_force(judgement: Judgement) -> str:
    """What its latest receipt said was in force when it was signed, were its rows as they
    are now: for a level that escalated (docs/escalation.md), `judging`: its verdict went
    on to the next level, which had not decided yet (that level's own receipt says what
    it decided, and a level that escalated takes no review); else its verdict in force."""
    return str(Status.JUDGING) if judgement.escalated else str(judgement.verdict)
