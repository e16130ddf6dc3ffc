"""Checking an evidence pack offline, field by field (docs/evidence.md): its receipt is
signed by a trusted key and says what the pack says (verdict, scores, mark, review,
content, title, agents, decisions); every entry hashes to its leaf hash and, placed, is
proven in the pack's signed checkpoint; the entries written before the receipt are
exactly those it counted (none left out); and every prompt, reply, attempt and check in
the pack is what an entry hashed. A pack holds every field a pack has and no other, its
entries in the order the log placed them. A story's pack (docs/escalation.md) holds every
other level's pack under `levels`, each checked alike; the levels are linked by their
log entries (a later level's submitted entry names the level it continues, a level's
verdict entry whether it escalated), and the verdict in force every level shows is its
last level's, as that level's receipt signed it. What `magi verify PACK` runs."""

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
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
from magi_client.json_values import JsonValue
from magi_client.receipts import PACK_FORMAT, CheckedReceipt, NotValid, check_receipt, hex_hash

Obj = Mapping[str, Any]


# Every field of a pack (docs/evidence.md): one more, or one less, is not a pack MAGI made.
PACK_FIELDS = frozenset({
    "format", "judgement", "title", "content", "created_at", "status", "verdict", "escalated",
    "mark", "certificate", "agents", "checks", "review", "receipt", "checkpoint", "entries",
    "keys", "level", "levels",
})  # fmt: skip
ENTRY_FIELDS = frozenset({"index", "leaf", "leaf_hash", "proof"})
# What the receipt of a level that escalated signs as in force: the story went on, and
# the next level's own receipt says what it decided (docs/escalation.md).
GONE_ON = "judging"


@dataclass(frozen=True)
class CheckedPack:
    receipt: CheckedReceipt
    entries: int
    proven: int  # entries proven in the pack's checkpoint
    checkpoint: checkpoints.Checkpoint | None
    # The story's verdict in force, and the level that gave it (its last, in the pack).
    verdict: str = ""
    levels: int = 1
    escalated: bool = False  # this level went on to the next (its verdict entry says so)
    escalates: JsonValue = None  # its submitted entry's link to the level it continues


def objects(value: JsonValue, what: str) -> list[Obj]:
    if not isinstance(value, list) or not all(isinstance(item, Mapping) for item in value):
        raise NotValid(f"the pack's {what} are not a list of objects")
    # Every item, in order: the test again, so the checker knows each is an object.
    return [item for item in value if isinstance(item, Mapping)]


def check_pack(
    pack: JsonValue, keys: Mapping[str, Ed25519PublicKey], content: bytes | None = None
) -> CheckedPack:
    """The pack checked whole, with every level of its escalation story; NotValid naming
    the first thing that does not hold."""
    if not isinstance(pack, Mapping):
        raise NotValid(f"not an evidence pack of format {PACK_FORMAT}")
    own = check_level(pack, keys, content)
    return check_story(pack, own, keys, content)


def check_level(
    pack: Mapping[str, JsonValue],
    keys: Mapping[str, Ed25519PublicKey],
    content: bytes | None = None,
) -> CheckedPack:
    """One level's pack checked field by field, its verdict in force left to its story."""
    if pack.get("format") != PACK_FORMAT:
        raise NotValid(f"not an evidence pack of format {PACK_FORMAT}")
    check_shape(pack)
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
    signed = check_record(entries, receipt.body)
    proven_at = None if receipt.checkpoint is None else receipt.checkpoint.size
    if checkpoint is not None and proven_at is not None and proven_at != checkpoint.size:
        raise NotValid(
            f"stale: the pack's receipt is proven in the log at size {proven_at}, its entries "
            f"at size {checkpoint.size}; fetch the pack again"
        )
    check_complete(entries, receipt)
    check_calls(pack, leaves)
    escalated = (
        signed.get("kind") == "verdict" and (signed.get("payload") or {}).get("escalated") is True
    )
    if escalated != (receipt.body.get("verdict") == GONE_ON) or escalated != pack.get("escalated"):
        raise NotValid(
            "the pack's escalated is not what its receipt and its verdict's log entry say"
        )
    submitted = [leaf.get("payload") or {} for leaf in leaves if leaf.get("kind") == "submitted"]
    return CheckedPack(
        receipt, len(entries), proven, checkpoint, str(receipt.body.get("verdict")), 1,
        escalated, submitted[0].get("escalates"),
    )  # fmt: skip


def check_shape(pack: Obj) -> None:
    """Every field a pack has and no other; its entries as written, in order."""
    extra, missing = set(pack) - PACK_FIELDS, PACK_FIELDS - set(pack)
    if extra or missing:
        said = [f"holds {', '.join(sorted(extra))}, which no pack has"] if extra else []
        said += [f"has no {', '.join(sorted(missing))}"] if missing else []
        raise NotValid(f"the pack {' and '.join(said)}: it is not a pack as MAGI makes one")
    entries = objects(pack.get("entries"), "entries")
    places = []
    for number, entry in enumerate(entries, 1):
        if set(entry) != ENTRY_FIELDS:
            raise NotValid(f"entry {number} of the pack is not {{index, leaf, leaf_hash, proof}}")
        places.append(entry.get("index"))
    placed = [place for place in places if place is not None]
    if places[: len(placed)] != placed or placed != sorted(set(placed)):
        raise NotValid(
            "the pack's entries are not in the order the log placed them (each placed entry "
            "after the one before, those not placed yet last)"
        )


def check_story(
    pack: Obj, own: CheckedPack, keys: Mapping[str, Ed25519PublicKey], content: bytes | None
) -> CheckedPack:
    """The story the pack's levels make (docs/escalation.md): levels 1 to N, each once
    and in order, each a whole pack that checks; each later level continuing the one
    before by its submitted entry, each before the last escalated by its verdict entry;
    and every level's verdict the last level's, as its receipt signed it (`judging`:
    the last escalated, and the story is not decided in this pack)."""
    story = [(pack, own)]
    for level in objects(pack.get("levels"), "levels"):
        where = f"level {level.get('level')} of the pack"
        if not isinstance(level, Mapping) or level.get("levels") != []:
            raise NotValid(f"{where} holds levels of its own: only the story's pack holds them")
        try:
            story.append((level, check_level(level, keys, content)))
        except NotValid as exc:
            raise NotValid(f"{where}: {exc}") from None
    numbers = [level.get("level") for level, _ in story]
    others = [n for n in numbers[1:] if isinstance(n, int) and not isinstance(n, bool)]
    if len(others) != len(numbers) - 1 or not isinstance(numbers[0], int):
        raise NotValid("the pack's levels are not numbered")
    if others != sorted(others):
        raise NotValid("the pack's levels are not in order")
    ordered = sorted(story, key=lambda item: int(item[0]["level"]))
    if [level["level"] for level, _ in ordered] != list(range(1, len(ordered) + 1)):
        raise NotValid(
            "the pack's levels are not its story's levels 1 to "
            f"{len(ordered)}, each once: a level was left out, added twice or renumbered"
        )
    first = ordered[0][0]["judgement"]
    if ordered[0][1].escalates is not None:
        raise NotValid("the pack's level 1 is, by its log entries, a later level of a story")
    for (before, earlier), (after, later) in itertools.pairwise(ordered):
        link = {"level": after["level"], "judgement": before["judgement"], "root": first}
        if later.escalates != link:
            raise NotValid(
                f"level {after['level']} of the pack (judgement {after['judgement']}) does not "
                f"continue judgement {before['judgement']}, by its log entries: it is not "
                "this story's"
            )
        if not earlier.escalated:
            raise NotValid(
                f"level {before['level']} of the pack kept its verdict, yet a level follows it"
            )
    last = ordered[-1][1]
    verdict = GONE_ON if last.escalated else last.verdict
    for level, _ in ordered:
        if level.get("verdict") != verdict:
            raise NotValid(
                f"the pack's verdict at level {level['level']} is {level.get('verdict')!r}, "
                f"its story's signed receipts say {verdict!r} (level {len(ordered)}'s)"
            )
    return replace(own, verdict=verdict, levels=len(ordered))


def check_fields(pack: Obj, body: Obj) -> None:
    """The receipt says what the pack says, field by field."""
    agents = objects(pack.get("agents"), "agents")
    said = {
        "judgement": (body.get("judgement"), pack.get("judgement")),
        "title": (body.get("title_sha256"), text_sha256(str(pack.get("title")))),
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


def check_record(entries: Sequence[Obj], body: Obj) -> Obj:
    """The entries before the receipt's are exactly those it counted, and none after it
    puts another verdict in force: the leaf of the entry it names."""
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
    leaf: Obj = entries[place]["leaf"]
    return leaf


def check_complete(entries: Sequence[Obj], receipt: CheckedReceipt) -> None:
    """The entries placed below the receipt's statement's size are every entry the log
    held about the judgement there (none left out, none added): a pack cut short of a
    later override, or of any entry, is stale."""
    statement = receipt.statement
    if statement is None:
        return  # its receipt is not placed yet: nothing is proven, nothing stated
    size = statement.get("size")
    hashes = [
        str(entry.get("leaf_hash"))
        for entry in entries
        if isinstance(entry.get("index"), int) and isinstance(size, int) and entry["index"] < size
    ]
    if [len(hashes), record_sha256(hashes)] != [statement.get("entries"), statement.get("sha256")]:
        raise NotValid(
            f"stale or cut: the log held {statement.get('entries')} entries about judgement "
            f"{statement.get('judgement')} at size {size}, and the pack's entries there are "
            "not those (one was left out, added or changed); fetch the pack again"
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
