"""Rows no log entry describes, for `audit verify` (audit/verification.py): looked for by
id, never by a row's own timestamp (which whoever writes the database writes too). The
genesis entry names the last row of each kind made before the log started; every later
row needs its entry: a judgement its submission (and, decided, its verdict), a decision,
every model call and check (by the hash of its fields: an edited prompt or reply is a
row no entry holds), a review, a certificate, an audit row. A review of a judgement made
after the log started is looked for whatever its id. A row with an id below 1, which no
range above the genesis's ids holds, is named in whichever table it is."""

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeAlias

from django.apps import apps
from django.db.models import Q

from judgements.audit.row_checks import Known, Problem
from judgements.core.json_values import JsonObject, JsonValue
from judgements.models import (
    AuditEntry,
    Certificate,
    Confirmation,
    EntryKind,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    Override,
    RoundDecision,
    Status,
)

# What an entry names a row by, as its payload says it (JSON; a row's own id is an int).
Key: TypeAlias = "JsonValue | tuple[JsonValue, ...]"


@dataclass
class Seen:
    """What the entries describe, by kind: judgement ids, (judgement, agent, round),
    certificate ids, audit row ids; and the genesis."""

    keys: dict[str, set[Key]] = field(default_factory=dict)
    genesis: JsonObject | None = None

    def saw(self, kind: str, key: Key) -> None:
        self.keys.setdefault(kind, set()).add(key)

    def has(self, kind: str, key: Key) -> bool:
        return key in self.keys.get(kind, set())


def before(seen: Seen) -> tuple[int, dict[str, int]]:
    """The last judgement and the last row of each kind made before the log started."""
    return rows_before(seen.genesis)


def rows_before(payload: JsonValue) -> tuple[int, dict[str, int]]:
    """A genesis payload read: the last judgement and the last row of each kind before
    the log (0 and none where it does not say; configuration/live_state.py reads its last
    token the same way)."""
    genesis = payload if isinstance(payload, dict) else {}
    last = genesis.get("judgements_before")
    kinds = genesis.get("before")
    found = {
        name: value
        for name, value in (kinds.items() if isinstance(kinds, dict) else [])
        if isinstance(name, str) and isinstance(value, int)
    }
    return (last if isinstance(last, int) else 0), found


def problems_for(kind: str, keys: Iterable[Key], seen: Seen, what: str) -> list[Problem]:
    return [
        Problem(None, f"no {kind} entry for {what.format(key=key)}: its row was added, or its "
                "entry removed, outside MAGI")
        for key in keys
        if not seen.has(kind, key)
    ]  # fmt: skip


# The apps whose tables `ids_below_one` reads: MAGI's, and Django's users, groups and
# permissions (who may sign in, and what they may do), whose tables MAGI does not own.
ID_APPS = ("judgements", "auth")


def ids_below_one() -> list[Problem]:
    """Every row with an id below 1, in every table of MAGI's and of Django's users,
    groups and permissions (their many-to-many rows too), looked for in each table by
    what it holds: no way of MAGI's or Django's makes one (ids count from 1, and MAGI's
    own tables refuse one: models/choices.py ids_from_one), and a check of the rows above
    the genesis's last id of a kind would never see it."""
    problems = []
    for model in apps.get_models(include_auto_created=True):
        pk = model._meta.pk
        if model._meta.app_label not in ID_APPS or pk is None:
            continue
        if pk.get_internal_type() not in ("AutoField", "BigAutoField", "IntegerField"):
            continue
        problems += [
            Problem(None, f"{model._meta.verbose_name} {found} has an id below 1, which no row "
                    f"MAGI makes has: it was written into the database outside MAGI "
                    f"({model._meta.db_table})")
            for found in model._default_manager.filter(pk__lt=1).values_list("pk", flat=True)
        ]  # fmt: skip
    return problems


def rows_without_entries(seen: Seen, known: Known) -> list[Problem]:
    if seen.genesis is None:
        return [Problem(None, "the log has no genesis entry: it was rebuilt or emptied")]
    last, rows_before = before(seen)
    later = Judgement.objects.filter(pk__gt=last)
    problems = problems_for(
        EntryKind.SUBMITTED, later.values_list("pk", flat=True), seen, "judgement {key}"
    )
    decided = later.filter(status__in=[Status.APPROVED, Status.REJECTED])
    problems += problems_for(
        EntryKind.VERDICT, decided.values_list("pk", flat=True), seen, "judgement {key}"
    )
    decisions = RoundDecision.objects.filter(agent__judgement__pk__gt=last).values_list(
        "agent__judgement_id", "agent__position", "round"
    )
    problems += problems_for(
        EntryKind.DECISION, decisions, seen, "judgement {key[0]}, agent {key[1]}, round {key[2]}"
    )
    overrides = Override.objects.filter(
        Q(pk__gt=rows_before.get("override", 0)) | Q(judgement_id__gt=last)
    )
    confirmations = Confirmation.objects.filter(
        Q(pk__gt=rows_before.get("confirmation", 0)) | Q(judgement_id__gt=last)
    )
    for kind, reviewed in (
        (EntryKind.OVERRIDE, overrides.values_list("judgement_id", flat=True)),
        (EntryKind.CONFIRMATION, confirmations.values_list("judgement_id", flat=True)),
    ):
        problems += problems_for(kind, reviewed, seen, "judgement {key}")
    made = Certificate.objects.filter(pk__gt=rows_before.get("certificate", 0))
    problems += problems_for(
        EntryKind.CERTIFICATE, made.values_list("pk", flat=True), seen, "certificate {key}"
    )
    audited = AuditEntry.objects.filter(pk__gt=rows_before.get("audit_entry", 0))
    problems += problems_for(
        EntryKind.CONFIGURATION, audited.values_list("pk", flat=True), seen, "audit row {key}"
    )
    return problems + calls_without_entries(last, rows_before, known) + ids_below_one()


def calls_without_entries(last: int, rows_before: dict[str, int], known: Known) -> list[Problem]:
    """Model calls and checks that no entry's hash holds: added, or edited since."""
    calls = LLMAttempt.objects.filter(
        pk__gt=rows_before.get("attempt", 0)
    ) | LLMAttempt.objects.filter(agent__judgement_id__gt=last)
    problems = [
        Problem(
            None,
            f"judgement {judgement}, agent {position}, round {number}: call {pk} (attempt "
            f"{attempt}) is in no entry: its prompt, reply, model or error was edited, or it "
            "was added outside MAGI",
        )
        for pk, judgement, position, number, attempt in calls.values_list(
            "pk", "agent__judgement_id", "agent__position", "round", "attempt"
        )
        if pk not in known.covered_attempts
    ]
    checks = JudgementCheck.objects.filter(
        pk__gt=rows_before.get("check", 0)
    ) | JudgementCheck.objects.filter(judgement_id__gt=last)
    problems += [
        Problem(
            None,
            f"judgement {judgement}: its {kind} check {pk} is in no entry: its call or finding "
            "was edited, or it was added outside MAGI",
        )
        for pk, judgement, kind in checks.values_list("pk", "judgement_id", "kind")
        if pk not in known.covered_checks
    ]
    return problems
