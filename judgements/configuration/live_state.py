"""The live configuration against its last audited state, for `manage.py audit verify`:
each panel (its reviewers too), budget, team, user (staff or not) and token as the audit
describes it now (the same functions that wrote its audit rows), against the `after` of
its last audit row and what later rows amending it set (a panel's reviewing, a user's
staff role), which audit verify has checked against the log. A limit raised, a row
deleted, a panel's criteria or reviewers edited, a member added or someone made staff
behind MAGI's back each show here."""

import json
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.contrib.auth.models import User
from django.db.models import Model

from judgements.audit import coverage
from judgements.audit.row_checks import Problem
from judgements.configuration import budget_config, people, suite_config, teams
from judgements.core.json_values import JsonObject, JsonValue
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
from judgements.models.panels import PanelState


class TeamReviewingState(teams.TeamState):
    """A team as its own rows describe it, with who reviews every panel of it (what its
    `reviewers` rows set)."""

    reviews_every_panel: list[str]


# A row's state as the audit writes it, kind by kind (a team's members: their usernames).
State = (
    PanelState
    | budget_config.BudgetState
    | TeamReviewingState
    | list[str]
    | people.UserState
    | people.TokenState
    | suite_config.SuiteAuditState
)
M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class Kind(Generic[M]):
    """An audited kind: its model, its rows' state as the audit writes it, and the fields
    compared (None: the whole state)."""

    model: type[M]
    state_of: Callable[[M], State]
    fields: tuple[str, ...] | None = None

    def state(self, row: Model) -> State:
        """The state of one of its rows (deletions.py reads it for any audited row)."""
        if not isinstance(row, self.model):
            raise TypeError(f"{row!r} is not a {self.model.__name__}")
        return self.state_of(row)

    def live(self, pks: Container[int]) -> dict[int, State]:
        """The state of each of its rows whose id is in `pks`, by id."""
        rows = self.model._default_manager.all()
        return {row.pk: self.state_of(row) for row in rows if row.pk in pks}


# What lets a user in, and how far: every field of people.state.
USER_FIELDS = (
    "username", "email", "is_staff", "is_superuser", "is_active", "sign_ins",
    "password_sha256", "groups", "permissions",
)  # fmt: skip
KINDS: dict[
    str, Kind[Panel] | Kind[Budget] | Kind[Team] | Kind[User] | Kind[ApiToken] | Kind[Suite]
] = {
    AuditSubject.PANEL: Kind(Panel, Panel.config_state),
    AuditSubject.BUDGET: Kind(Budget, budget_config.audit_state),
    AuditSubject.TEAM: Kind(Team, lambda team: team_state(team), ("name", "reviews_every_panel")),
    AuditSubject.MEMBERSHIP: Kind(Team, lambda team: teams.team_state(team)["members"]),
    AuditSubject.USER: Kind(User, people.state, USER_FIELDS),
    AuditSubject.TOKEN: Kind(
        ApiToken, people.token_state, ("user", "name", "team", "prefix", "key_hash", "revoked")
    ),
    AuditSubject.SUITE: Kind(Suite, suite_config.audit_state),
}


def team_state(team: Team) -> TeamReviewingState:
    """A team as its own rows describe it, with who reviews every panel of it (set by a
    sign-in's groups: `reviewers` rows naming the team)."""
    return {**teams.team_state(team), "reviews_every_panel": teams.all_panel_reviewers(team)}


def reviewing(after: JsonValue) -> JsonObject:
    return dict(after) if isinstance(after, dict) else {}


def staff_role(after: JsonValue) -> JsonObject:
    return {"is_staff": after}


# Rows that set a part of another kind's state: (subject, target's first word) -> the
# kind they amend and the part they set. A panel's reviewing (configuration/teams.py's
# set_reviewing, the admin) and a user's staff role followed from a sign-in's groups.
AMENDS: dict[tuple[str, str], tuple[str, Callable[[JsonValue], JsonObject]]] = {
    (AuditSubject.REVIEWERS, "panel"): (AuditSubject.PANEL, reviewing),
    (AuditSubject.REVIEWERS, "team"): (AuditSubject.TEAM, reviewing),
    (AuditSubject.STAFF, "user"): (AuditSubject.USER, staff_role),
}
# The parts only amending rows set, as they are before any: a team's own rows never say
# who reviews all its panels, and until a `reviewers` row says so, no one does.
AMENDED_ONLY: dict[str, JsonObject] = {AuditSubject.TEAM: {"reviews_every_panel": []}}


def id_of(target: str) -> int | None:
    words = target.split()
    return int(words[1]) if len(words) > 1 and words[1].isdecimal() else None


def last_audited(subjects: Iterable[str]) -> dict[tuple[str, int], JsonValue]:
    """(subject, id) -> the `after` of its last audit row, by id (never by time), with
    what the later rows that amend it (AMENDS) set."""
    found: dict[tuple[str, int], JsonValue] = {}
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


def own_row(subject: str, last: JsonValue, after: JsonValue) -> JsonValue:
    """A kind's own row sets its state, but for the parts only amending rows set, which
    it keeps from `last` (or their state before any)."""
    parts = AMENDED_ONLY.get(subject)
    if parts is None or not isinstance(after, dict):
        return after
    kept = {name: last[name] for name in parts if isinstance(last, dict) and name in last}
    return parts | kept | after


def deleted(audited: dict[tuple[str, int], JsonValue], subject: str, pk: int) -> bool:
    return (subject, pk) in audited and audited[(subject, pk)] is None


def carried(after: JsonValue, fields: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The fields compared: those of the kind its last audit row carries. A row written
    before a field was audited (a token's key hash, before issue 55) does not make every
    older row differ; the row itself is in the log, so no one strips a field from it."""
    if fields is None or not isinstance(after, dict):
        return fields
    return tuple(name for name in fields if name in after)


def differs(after: JsonValue, now: State | None, fields: tuple[str, ...] | None) -> bool:
    """Whether a row's state now (None: the row is gone) differs from its last audited
    state: in the fields its kind compares that the audit row carries, when both are
    objects; as a whole otherwise."""
    compared = carried(after, fields)
    if compared is None or not isinstance(after, dict) or not isinstance(now, dict):
        return after != now
    return [after.get(name) for name in compared] != [now.get(name) for name in compared]


def differences() -> list[Problem]:
    audited = last_audited(KINDS)
    problems = []
    for subject, kind in KINDS.items():
        live = kind.live({pk for (audited_kind, pk) in audited if audited_kind == subject})
        for (audited_kind, pk), after in audited.items():
            if audited_kind != subject:
                continue
            if (
                pk not in live
                and subject == AuditSubject.MEMBERSHIP
                and deleted(audited, AuditSubject.TEAM, pk)
            ):
                continue  # the team's deletion is audited: its members went with it
            if differs(after, live.get(pk), kind.fields):
                what = "is gone" if pk not in live else "differs from its last audited state"
                problems.append(
                    Problem(
                        None,
                        f"{subject} {pk} {what}: it was changed outside MAGI "
                        f"({kind.model.__name__})",
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


def rows_added(audited: dict[tuple[str, int], JsonValue]) -> list[Problem]:
    """Rows made after the log started with no audit row. A kind the genesis does not
    name is not looked for (not_checked says so): every older row would be named."""
    before = genesis_before()
    problems = []
    for name, (subject, word) in ADDED.items():
        if name not in before:
            continue
        model = KINDS[subject].model
        made = model._default_manager.filter(pk__gt=before[name]).order_by("pk")
        problems += [
            Problem(None, f"{word} {pk} was added outside MAGI: no audit row made it "
                    f"({model.__name__})")
            for pk in made.values_list("pk", flat=True)
            if (subject, pk) not in audited
        ]  # fmt: skip
    return problems
