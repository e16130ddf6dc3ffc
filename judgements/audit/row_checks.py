"""Each log entry against the rows it describes, a batch at a time: the rows are read
again and described by the same functions that wrote the entries (audit/record.py's
`*_fact`), and every field that differs is named. Every model call and check an entry
hashes is noted as covered, so audit/coverage.py can name those no entry holds. Used by
audit/verification.py."""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias

from judgements.audit import facts, record
from judgements.core.json_values import JsonObject, JsonValue
from judgements.models import (
    AuditEntry,
    Certificate,
    ChainEntry,
    Confirmation,
    EntryKind,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    Override,
    RoundDecision,
)
from magi_client.canonical import call_sha256

# An entry with its payload as parsed (tree_checks.parsed: a JSON object, canonical).
Item = tuple[ChainEntry, JsonObject]
# Rows looked up by what an entry says (JSON, so any value: one not a row's key finds none).
Said: TypeAlias = "JsonValue | tuple[JsonValue, ...]"


@dataclass(frozen=True)
class Problem:
    """What differs, at which entry (None: a row with no entry at all)."""

    seq: int | None
    message: str

    def __str__(self) -> str:
        return self.message if self.seq is None else f"entry {self.seq}: {self.message}"


def where(entry: ChainEntry) -> int | None:
    """The entry's place, for a problem (None: still queued, named in the message)."""
    return entry.seq


@dataclass
class Known:
    """What the chain itself says that explains a missing row: certificates whose panel a
    later entry deleted (a deleted panel takes its certificates with it)."""

    certificate_panels: dict[int, int] = field(default_factory=dict)
    deleted_panels: set[int] = field(default_factory=set)
    # The model calls and checks an entry hashes, by row id (audit/coverage.py).
    covered_attempts: set[int] = field(default_factory=set)
    covered_checks: set[int] = field(default_factory=set)

    def certificate_gone_with_panel(self, certificate_id: object) -> bool:
        panel = (
            self.certificate_panels.get(certificate_id) if isinstance(certificate_id, int) else None
        )
        return panel is not None and panel in self.deleted_panels


def differences(
    item: Item,
    found: Mapping[str, object],
    tolerate: Callable[[str, object], bool] = lambda k, v: False,
) -> list[Problem]:
    """Every field where the entry and the row's description differ, by name."""
    entry, payload = item
    problems = []
    # Facts an entry of an older release did not hold: compared where it holds them (every
    # entry made since does, and no one else's entry is placed: audit/sequencer.py).
    if entry.kind in STORY_KINDS:
        found = {k: v for k, v in found.items() if k not in facts.STORY_KEYS or k in payload}
    # An entry of the old hash chain says fewer things: only those are compared.
    names = set(payload) if entry.prev_sha256 else set(payload) | set(found)
    for key in sorted(names):
        said, now = payload.get(key), found.get(key)
        if said == now or tolerate(key, now):
            continue
        if key in CALL_KEYS:
            what = "the call (its prompt, reply, model or error) was edited, or is gone"
        elif key.endswith("_sha256"):
            what = f"the {key.removesuffix('_sha256')} text was edited (its SHA-256 differs)"
        else:
            what = f"{key} is {now!r} in the database, {said!r} in the chain"
        problems.append(Problem(where(entry), f"{entry.kind} of {entry.subject}: {what}"))
    return problems[:1]


CALL_KEYS = ("attempt_sha256", "call_sha256")
STORY_KINDS = (EntryKind.SUBMITTED, EntryKind.VERDICT)


def gone(item: Item, what: str) -> list[Problem]:
    entry, _ = item
    return [
        Problem(where(entry), f"{entry.kind} of {entry.subject}: {what} is gone from the database")
    ]


def ids(items: Iterable[Item], key: str) -> list[JsonValue]:
    return [payload.get(key) for _, payload in items]


def judgements_of(items: list[Item]) -> dict[Said, Judgement]:
    """The judgements the entries name, by id (keyed by Said: the entries' ids are JSON)."""
    found = Judgement.objects.filter(pk__in=ids(items, "judgement")).prefetch_related("agents")
    return {row.pk: row for row in found}


def check_submitted(items: list[Item], known: Known) -> list[Problem]:
    rows = judgements_of(items)
    problems = []
    for item in items:
        row = rows.get(item[1].get("judgement"))
        problems += (
            gone(item, "the judgement")
            if row is None
            else differences(item, record.submitted_fact(row))
        )
    return problems


def attempts_of(items: list[Item]) -> dict[Said, list[LLMAttempt]]:
    """The judgements' calls by (judgement, agent, round)."""
    found: dict[Said, list[LLMAttempt]] = {}
    for row in LLMAttempt.objects.filter(
        agent__judgement_id__in=ids(items, "judgement")
    ).select_related("agent"):
        found.setdefault((row.agent.judgement_id, row.agent.position, row.round), []).append(row)
    return found


def matching(calls: list[LLMAttempt], said: object, known: Known) -> LLMAttempt | None:
    """Of an agent's calls in a round, one no entry has claimed whose fields hash to what
    this entry says; noted as covered."""
    for row in calls:
        if row.pk not in known.covered_attempts and call_sha256(record.attempt_call(row)) == said:
            known.covered_attempts.add(row.pk)
            return row
    return None


def check_decision(items: list[Item], known: Known) -> list[Problem]:
    rows: dict[Said, RoundDecision] = {
        (row.agent.judgement_id, row.agent.position, row.round): row
        for row in RoundDecision.objects.filter(
            agent__judgement_id__in=ids(items, "judgement")
        ).select_related("agent")
    }
    calls = attempts_of(items)
    problems = []
    for item in items:
        payload = item[1]
        key = (payload.get("judgement"), payload.get("agent"), payload.get("round"))
        row = rows.get(key)
        if row is None:
            problems += gone(item, "the decision")
            continue
        made = [call for call in calls.get(key, []) if call.outcome == "ok"]
        call = matching(made, payload.get("attempt_sha256"), known) or next(iter(made), None)
        problems += differences(item, record.decision_fact(row, row.agent, call))
    return problems


def check_attempt(items: list[Item], known: Known) -> list[Problem]:
    calls = attempts_of(items)
    problems = []
    for item in items:
        payload = item[1]
        key = (payload.get("judgement"), payload.get("agent"), payload.get("round"))
        found = calls.get(key, [])
        unused = [call for call in found if call.outcome != "ok"] or found
        call = matching(found, payload.get("call_sha256"), known) or next(iter(unused), None)
        if call is None:
            problems += gone(item, "the call")
        else:
            problems += differences(item, record.attempt_fact(call, call.agent))
    return problems


def check_check(items: list[Item], known: Known) -> list[Problem]:
    found: dict[Said, list[JudgementCheck]] = {}
    for row in JudgementCheck.objects.filter(
        judgement_id__in=ids(items, "judgement")
    ).select_related("agent"):
        position = None if row.agent is None else row.agent.position
        found.setdefault((row.judgement_id, row.kind, position), []).append(row)
    problems = []
    for item in items:
        payload = item[1]
        rows = found.get((payload.get("judgement"), payload.get("kind"), payload.get("agent")), [])
        match = [
            row for row in rows if call_sha256(record.call_of(row)) == payload.get("call_sha256")
        ]
        found_row = next(iter(match or rows), None)
        if found_row is None:
            problems += gone(item, "the check")
            continue
        row = found_row
        if match:
            known.covered_checks.add(row.pk)
        position = None if row.agent is None else row.agent.position
        problems += differences(item, record.check_fact(row, position))
    return problems


def check_verdict(items: list[Item], known: Known) -> list[Problem]:
    rows = judgements_of(items)
    problems = []
    for item in items:
        row = rows.get(item[1].get("judgement"))
        if row is None:
            problems += gone(item, "the judgement")
            continue
        said = item[1].get("certificate")

        def deleted_with_its_panel(key: str, now: object, said: JsonValue = said) -> bool:
            return key == "certificate" and now is None and known.certificate_gone_with_panel(said)

        problems += differences(item, record.verdict_fact(row), deleted_with_its_panel)
    return problems


def check_review(
    items: list[Item], known: Known, model: type[Override] | type[Confirmation]
) -> list[Problem]:
    judgements = judgements_of(items)
    rows: dict[Said, Override | Confirmation] = {
        row.judgement_id: row
        for row in model.objects.filter(judgement_id__in=ids(items, "judgement"))
    }
    problems = []
    for item in items:
        row = rows.get(item[1].get("judgement"))
        if row is None or row.judgement_id not in judgements:
            problems += gone(item, f"the {item[0].kind}")
            continue
        # Each row is of `model`: described by its own kind's function.
        judgement = judgements[row.judgement_id]
        if isinstance(row, Override):
            problems += differences(item, record.override_fact(row, judgement))
        else:
            problems += differences(item, record.confirmation_fact(row, judgement))
    return problems


def check_certificate(items: list[Item], known: Known) -> list[Problem]:
    rows: dict[Said, Certificate] = {
        row.pk: row for row in Certificate.objects.filter(pk__in=ids(items, "certificate"))
    }
    problems = []
    for item in items:
        entry, payload = item
        row = rows.get(payload.get("certificate"))
        if row is None:
            if not known.certificate_gone_with_panel(payload.get("certificate")):
                problems += gone(item, "the certificate")
        elif entry.kind == EntryKind.CERTIFICATE:
            problems += differences(item, record.certificate_fact(row))
        else:
            problems += differences(item, record.certificate_voided_fact(row))
    return problems


def check_configuration(items: list[Item], known: Known) -> list[Problem]:
    rows: dict[Said, AuditEntry] = {
        row.pk: row for row in AuditEntry.objects.filter(pk__in=ids(items, "audit_entry"))
    }
    problems = []
    for item in items:
        row = rows.get(item[1].get("audit_entry"))
        if row is None:
            problems += gone(item, "the audit row")
        else:
            # A user deleted since: the row's "by" reads empty, which is not an edit.
            problems += differences(
                item, record.configuration_fact(row), lambda key, now: key == "by" and now is None
            )
    return problems


CHECKS: dict[str, Callable[[list[Item], Known], list[Problem]]] = {
    EntryKind.SUBMITTED: check_submitted,
    EntryKind.DECISION: check_decision,
    EntryKind.ATTEMPT: check_attempt,
    EntryKind.CHECK: check_check,
    EntryKind.VERDICT: check_verdict,
    EntryKind.OVERRIDE: lambda items, known: check_review(items, known, Override),
    EntryKind.CONFIRMATION: lambda items, known: check_review(items, known, Confirmation),
    EntryKind.CERTIFICATE: check_certificate,
    EntryKind.CERTIFICATE_VOIDED: check_certificate,
    EntryKind.CONFIGURATION: check_configuration,
}


def check_rows(items: list[Item], known: Known) -> list[Problem]:
    """A batch of entries (with their parsed payloads) against their rows."""
    by_kind: dict[str, list[Item]] = {}
    for item in items:
        by_kind.setdefault(item[0].kind, []).append(item)
    problems = []
    for kind, group in by_kind.items():
        check = CHECKS.get(kind)
        if check is not None:
            problems += check(group, known)
        elif kind != EntryKind.GENESIS:
            problems += [Problem(where(entry), f"unknown kind {kind!r}") for entry, _ in group]
    return problems
