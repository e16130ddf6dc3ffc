"""Checking an evidence pack offline, field by field (docs/evidence.md): its receipt is
signed by a trusted key and says what the pack says (verdict, scores, mark, review,
content, title, agents, decisions); every entry hashes to its leaf hash and, placed, is
proven in the pack's signed checkpoint; the entries written before the receipt are
exactly those it counted (none left out); and every prompt, reply, attempt and check in
the pack is what an entry hashed. What `magi verify PACK` runs."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from magi_client import checkpoints, merkle
from magi_client.canonical import (
    NotCanonical,
    call_sha256,
    leaf_hash,
    record_sha256,
    text_sha256,
)
from magi_client.receipts import PACK_FORMAT, CheckedReceipt, NotValid, check_receipt, hex_hash

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class CheckedPack:
    receipt: CheckedReceipt
    entries: int
    proven: int  # entries proven in the pack's checkpoint
    checkpoint: checkpoints.Checkpoint | None


def objects(value: object, what: str) -> list[Obj]:
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise NotValid(f"the pack's {what} are not a list of objects")
    return list(value)


def check_pack(
    pack: object, keys: Mapping[str, Ed25519PublicKey], content: bytes | None = None
) -> CheckedPack:
    """The pack checked whole; NotValid naming the first thing that does not hold."""
    if not isinstance(pack, Mapping) or pack.get("format") != PACK_FORMAT:
        raise NotValid(f"not an evidence pack of format {PACK_FORMAT}")
    text = pack.get("content")
    if not isinstance(text, str):
        raise NotValid("the pack holds no content")
    if pack.get("receipt") is None:
        raise NotValid("the pack has no receipt: the judgement has no verdict, or none signed")
    receipt = check_receipt(pack["receipt"], keys, text.encode("utf-8"))
    if (
        content is not None
        and text_sha256(content.decode("utf-8", "replace")) != receipt.body["content_sha256"]
    ):
        raise NotValid("the content given is not the content the pack's receipt names")
    check_fields(pack, receipt.body)
    entries = objects(pack.get("entries"), "entries")
    checkpoint, proven = check_entries(pack, entries, keys)
    leaves = [entry["leaf"] for entry in entries]
    check_record(entries, receipt.body)
    check_calls(pack, leaves)
    return CheckedPack(receipt, len(entries), proven, checkpoint)


def check_fields(pack: Obj, body: Obj) -> None:
    """The receipt says what the pack says, field by field."""
    agents = objects(pack.get("agents"), "agents")
    said = {
        "judgement": (body.get("judgement"), pack.get("judgement")),
        "title": (body.get("title_sha256"), text_sha256(str(pack.get("title")))),
        "verdict": (body.get("verdict"), pack.get("verdict")),
        "status": (body.get("panel_verdict"), pack.get("status")),
        "mark": (body.get("mark"), pack.get("mark")),
        "certificate": (body.get("certificate"), pack.get("certificate")),
        "scores": (
            body.get("scores"),
            [{"agent": a.get("position"), "score_tenths": a.get("score_tenths"),
              "decision": a.get("final_decision")} for a in agents],
        ),
        "agents": (
            body.get("agents"),
            [{"position": a.get("position"), "name": a.get("name"), "model": a.get("model"),
              "criteria_sha256": text_sha256(str(a.get("criteria")))} for a in agents],
        ),
        "decisions": (
            sorted((d["agent"], r["round"], d["decision"], d["reason_sha256"])
                   for r in body.get("rounds") or [] for d in r["decisions"]),
            sorted((a.get("position"), d.get("round"), d.get("decision"),
                    text_sha256(str(d.get("reason"))))
                   for a in agents for d in objects(a.get("decisions"), "decisions")),
        ),
    }  # fmt: skip
    review = pack.get("review")
    if isinstance(review, Mapping):
        kept = {key: value for key, value in review.items() if key != "reason"}
        said["review"] = (
            body.get("review"),
            kept | {"reason_sha256": text_sha256(str(review.get("reason")))},
        )
    else:
        said["review"] = (body.get("review"), None)
    for name, (signed, shown) in said.items():
        if signed != shown:
            raise NotValid(f"the pack's {name} is not what its signed receipt says")


def check_entries(
    pack: Obj, entries: Sequence[Obj], keys: Mapping[str, Ed25519PublicKey]
) -> tuple[checkpoints.Checkpoint | None, int]:
    """Each entry's leaf hash, its judgement, and its inclusion in the pack's checkpoint."""
    checkpoint = None
    if pack.get("checkpoint") is not None:
        try:
            checkpoint = checkpoints.checked(str(pack["checkpoint"]), keys)
        except checkpoints.BadCheckpoint as exc:
            raise NotValid(f"the pack's checkpoint: {exc}") from None
    proven = 0
    for number, entry in enumerate(entries, 1):
        leaf = entry.get("leaf")
        try:
            if not isinstance(leaf, Mapping) or leaf_hash(leaf) != entry.get("leaf_hash"):
                raise NotValid(f"entry {number} of the pack: its leaf hash does not match its leaf")
        except NotCanonical as exc:
            raise NotValid(f"entry {number} of the pack: {exc}") from None
        if leaf.get("format") and leaf.get("judgement") != pack.get("judgement"):
            raise NotValid(f"entry {number} of the pack is about another judgement")
        if checkpoint is None or entry.get("proof") is None:
            continue
        try:
            merkle.check_inclusion(
                hex_hash(entry.get("leaf_hash"), "a leaf hash"), int(entry.get("index", -1)),
                checkpoint.size, [hex_hash(item, "a proof's hash") for item in entry["proof"]],
                checkpoint.root,
            )  # fmt: skip
        except (merkle.ProofFailed, TypeError, ValueError) as exc:
            raise NotValid(
                f"entry {number} of the pack is not in the log's checkpoint: {exc}"
            ) from None
        proven += 1
    return checkpoint, proven


def check_record(entries: Sequence[Obj], body: Obj) -> None:
    """The entries before the receipt's are exactly those it counted, and none after it
    puts another verdict in force."""
    named = (body.get("entry") or {}).get("leaf_hash")
    hashes = [str(entry.get("leaf_hash")) for entry in entries]
    if named not in hashes:
        raise NotValid("the pack's entries do not hold the entry its receipt names")
    place = hashes.index(named)
    record = body.get("record") or {}
    earlier = hashes[:place]
    if record.get("entries") != len(earlier) or record.get("sha256") != record_sha256(earlier):
        raise NotValid(
            "the pack's entries before its receipt are not those the receipt counted: one was "
            "left out, added or changed"
        )
    later = [entry["leaf"].get("kind") for entry in entries[place + 1 :]]
    if any(kind in ("verdict", "override", "confirmation") for kind in later):
        raise NotValid(
            "the pack's receipt is not its latest: a later entry put another verdict in force"
        )


def check_calls(pack: Obj, leaves: Sequence[Obj]) -> None:
    """Every prompt, reply, decision and check of the pack is what an entry hashed, and
    every call an entry hashed is in the pack."""
    payloads: dict[str, list[Obj]] = {}
    for leaf in leaves:
        if isinstance(leaf.get("payload"), Mapping):
            payloads.setdefault(str(leaf.get("kind")), []).append(leaf["payload"])
    logged = {p.get("attempt_sha256") for p in payloads.get("decision", [])}
    logged |= {p.get("call_sha256") for p in payloads.get("attempt", [])}
    shown = set()
    for agent in objects(pack.get("agents"), "agents"):
        for attempt in objects(agent.get("attempts"), "attempts"):
            digest = call_sha256(attempt)
            if digest not in logged:
                raise NotValid(
                    f"agent {agent.get('position')}'s call in round {attempt.get('round')} "
                    f"(attempt {attempt.get('attempt')}) is not what the log holds: its prompt, "
                    "reply, model or error was changed"
                )
            shown.add(digest)
        check_decisions(agent, payloads.get("decision", []))
    if logged - shown - {None}:
        raise NotValid("the log holds a call of this judgement that the pack leaves out")
    check_checks(pack, payloads.get("check", []))
    check_submitted(pack, payloads.get("submitted", []))


def check_decisions(agent: Obj, hashed: list[Obj]) -> None:
    by_round = {(p.get("agent"), p.get("round")): p for p in hashed}
    for decision in objects(agent.get("decisions"), "decisions"):
        entry = by_round.get((agent.get("position"), decision.get("round")))
        where = f"agent {agent.get('position')}'s round {decision.get('round')}"
        if entry is None:
            raise NotValid(f"no log entry for {where}")
        shown = [decision.get("decision"), text_sha256(str(decision.get("reason"))),
                 decision.get("missing"), decision.get("p_approve")]  # fmt: skip
        if shown != [entry.get(k) for k in ("decision", "reason_sha256", "missing", "p_approve")]:
            raise NotValid(f"{where} in the pack is not what its log entry hashed")


def check_checks(pack: Obj, hashed: list[Obj]) -> None:
    logged = [dict(p) for p in hashed]
    checks = objects(pack.get("checks"), "checks")
    for check in checks:
        finding = {
            key: check.get(key) for key in ("kind", "agent", "decision", "p_approve", "steered")
        }
        call = {key: value for key, value in check.items() if key not in finding}
        wanted = finding | {"call_sha256": call_sha256(call), "judgement": pack.get("judgement")}
        if wanted not in logged:
            raise NotValid(f"the pack's {check.get('kind')} check is not what the log holds")
        logged.remove(wanted)
    if logged:
        raise NotValid("the log holds a check of this judgement that the pack leaves out")


def check_submitted(pack: Obj, hashed: list[Obj]) -> None:
    if not hashed:
        raise NotValid("the pack holds no entry of the judgement's submission")
    for submitted in hashed:
        if submitted.get("content_sha256") != text_sha256(str(pack.get("content"))):
            raise NotValid("the pack's content is not the content its submitted entry hashed")
        if submitted.get("title_sha256") != text_sha256(str(pack.get("title"))):
            raise NotValid("the pack's title is not the title its submitted entry hashed")
        if submitted.get("created_at") != pack.get("created_at"):
            raise NotValid("the pack's created_at is not its submitted entry's")
        criteria = [a.get("criteria_sha256") for a in submitted.get("agents") or []]
        held = [text_sha256(str(a.get("criteria"))) for a in objects(pack.get("agents"), "agents")]
        if criteria != held:
            raise NotValid("the pack's agents' criteria are not those its submitted entry hashed")
