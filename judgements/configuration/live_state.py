"""The live configuration against its last audited state, for `manage.py audit verify`:
each panel (its reviewers too), budget, team, user (staff or not) and token as the audit
describes it now (the same functions that wrote its audit rows), against the `after` of
its last audit row and what later rows amending it set (a panel's reviewing, a user's
staff role), which audit verify has checked against the log. A limit raised, a row
deleted, a panel's criteria or reviewers edited, a member added or someone made staff
behind MAGI's back each show here."""

import json
from collections.abc import Callable, Iterable
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Model

from judgements.audit import coverage
from judgements.audit.row_checks import Problem
from judgements.configuration import budget_config, people, suite_config, teams
from judgements.models import (
    ApiToken,
    AuditEntry,
    AuditSubject,
    Budget,
    ChainEntry,
    EntryKind,
    Panel,
    Suite,
    Team,
)

# What lets a user in, and how far: every field of people.state.
USER_FIELDS = (
    "username", "email", "is_staff", "is_superuser", "is_active", "sign_ins",
    "password_sha256", "groups", "permissions",
)  # fmt: skip
# subject -> (the model, its state as the audit writes it, the fields compared).
KINDS: dict[str, tuple[type[Model], Callable[[Any], object], tuple[str, ...] | None]] = {
    AuditSubject.PANEL: (Panel, lambda panel: panel.config_state(), None),
    AuditSubject.BUDGET: (Budget, budget_config.audit_state, None),
    AuditSubject.TEAM: (Team, lambda team: team_state(team), ("name", "reviews_every_panel")),
    AuditSubject.MEMBERSHIP: (Team, lambda team: teams.team_state(team)["members"], None),
    AuditSubject.USER: (User, people.state, USER_FIELDS),
    AuditSubject.TOKEN: (
        ApiToken,
        people.token_state,
        ("user", "name", "team", "prefix", "key_hash", "revoked"),
    ),
    AuditSubject.SUITE: (Suite, suite_config.audit_state, None),
}


def team_state(team: Team) -> dict[str, object]:
    """A team as its own rows describe it, with who reviews every panel of it (set by a
    sign-in's groups: `reviewers` rows naming the team)."""
    return teams.team_state(team) | {"reviews_every_panel": teams.all_panel_reviewers(team)}


def reviewing(after: object) -> dict[str, object]:
    return dict(after) if isinstance(after, dict) else {}


def staff_role(after: object) -> dict[str, object]:
    return {"is_staff": after}


# Rows that set a part of another kind's state: (subject, target's first word) -> the
# kind they amend and the part they set. A panel's reviewing (configuration/teams.py's
# set_reviewing, the admin) and a user's staff role followed from a sign-in's groups.
AMENDS: dict[tuple[str, str], tuple[str, Callable[[object], dict[str, object]]]] = {
    (AuditSubject.REVIEWERS, "panel"): (AuditSubject.PANEL, reviewing),
    (AuditSubject.REVIEWERS, "team"): (AuditSubject.TEAM, reviewing),
    (AuditSubject.STAFF, "user"): (AuditSubject.USER, staff_role),
}
# The parts only amending rows set, as they are before any: a team's own rows never say
# who reviews all its panels, and until a `reviewers` row says so, no one does.
AMENDED_ONLY: dict[str, dict[str, object]] = {AuditSubject.TEAM: {"reviews_every_panel": []}}


def id_of(target: str) -> int | None:
    words = target.split()
    return int(words[1]) if len(words) > 1 and words[1].isdecimal() else None


def last_audited(subjects: Iterable[str]) -> dict[tuple[str, int], object]:
    """(subject, id) -> the `after` of its last audit row, by id (never by time), with
    what the later rows that amend it (AMENDS) set."""
    found: dict[tuple[str, int], object] = {}
    amending = sorted({subject for subject, _ in AMENDS})
    rows = AuditEntry.objects.filter(subject__in=[*subjects, *amending]).order_by("pk")
    for subject, target, after in rows.values_list("subject", "target", "after"):
        pk = id_of(target)
        amends = AMENDS.get((subject, target.split(" ", 1)[0]))
        if pk is None or (subject in amending and amends is None):
            continue
        if amends is None:
            found[(subject, pk)] = own_row(subject, found.get((subject, pk)), after)
        elif isinstance(state := found.get((amends[0], pk)), dict):
            found[(amends[0], pk)] = state | amends[1](after)
    return found


def own_row(subject: str, last: object, after: object) -> object:
    """A kind's own row sets its state, but for the parts only amending rows set, which
    it keeps from `last` (or their state before any)."""
    parts = AMENDED_ONLY.get(subject)
    if parts is None or not isinstance(after, dict):
        return after
    kept = {name: last[name] for name in parts if isinstance(last, dict) and name in last}
    return parts | kept | after


def deleted(audited: dict[tuple[str, int], object], subject: str, pk: int) -> bool:
    return (subject, pk) in audited and audited[(subject, pk)] is None


def carried(after: object, fields: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The fields compared: those of the kind its last audit row carries. A row written
    before a field was audited (a token's key hash, before issue 55) does not make every
    older row differ; the row itself is in the log, so no one strips a field from it."""
    if fields is None or not isinstance(after, dict):
        return fields
    return tuple(name for name in fields if name in after)


def compared(state: object, fields: tuple[str, ...] | None) -> object:
    if fields is None or not isinstance(state, dict):
        return state
    return {name: state.get(name) for name in fields}


def differences() -> list[Problem]:
    audited = last_audited(KINDS)
    problems = []
    for subject, (model, state_of, fields) in KINDS.items():
        live = {row.pk: row for row in model._default_manager.all()}
        for (kind, pk), after in audited.items():
            if kind != subject:
                continue
            row = live.get(pk)
            if (
                row is None
                and subject == AuditSubject.MEMBERSHIP
                and deleted(audited, AuditSubject.TEAM, pk)
            ):
                continue  # the team's deletion is audited: its members went with it
            fields_now = carried(after, fields)
            now = None if row is None else compared(state_of(row), fields_now)
            if compared(after, fields_now) != now:
                what = "is gone" if row is None else "differs from its last audited state"
                problems.append(
                    Problem(
                        None,
                        f"{subject} {pk} {what}: it was changed outside MAGI ({model.__name__})",
                    )
                )
    return problems + rows_added(audited)


# The rows every way of making is audited, by the genesis's name for them: one made after
# the log started with no audit row was written into the database (a token with a key
# its writer knows, a user with a password hash they know, a panel, budget or team).
ADDED: dict[str, tuple[str, str]] = {
    "user": (AuditSubject.USER, "user"),
    "panel": (AuditSubject.PANEL, "panel"),
    "budget": (AuditSubject.BUDGET, "budget"),
    "team": (AuditSubject.TEAM, "team"),
    "api_token": (AuditSubject.TOKEN, "token"),
}


def genesis_before() -> dict[str, int]:
    """The last row of each kind the genesis names (coverage.rows_before)."""
    genesis = ChainEntry.objects.filter(kind=EntryKind.GENESIS).order_by("pk").first()
    return coverage.rows_before(None if genesis is None else json.loads(genesis.payload))[1]


def not_checked() -> list[str]:
    """The kinds whose rows added outside MAGI cannot be told from older ones: the genesis
    of a log started before it named their last row (before issue 55) does not say it."""
    before = genesis_before()
    return [f"{word}s" for name, (_, word) in ADDED.items() if name not in before]


def rows_added(audited: dict[tuple[str, int], object]) -> list[Problem]:
    """Rows made after the log started with no audit row. A kind the genesis does not
    name is not looked for (not_checked says so): every older row would be named."""
    before = genesis_before()
    problems = []
    for name, (subject, word) in ADDED.items():
        if name not in before:
            continue
        model = KINDS[subject][0]
        made = model._default_manager.filter(pk__gt=before[name]).order_by("pk")
        problems += [
            Problem(None, f"{word} {pk} was added outside MAGI: no audit row made it "
                    f"({model.__name__})")
            for pk in made.values_list("pk", flat=True)
            if (subject, pk) not in audited
        ]  # fmt: skip
    return problems
