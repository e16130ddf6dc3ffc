"""Deleting configuration, audited whatever deletes it: the admin's delete (one row or
"delete selected"), the API's and what a deletion takes with it or changes: a user's
budgets and tokens, a panel's budgets, a team's budgets; a team's panels, suites and
tokens, theirs alone again; a team's members when a user goes, a panel's reviewers. Each
row that goes gets its audit row (after: none) and each row changed its audit row (before
and after), in the same transaction, so `audit verify` finds every deletion in the log and
none of these rows gone or changed unexplained (configuration/live_state.py)."""

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from django.contrib.admin.utils import NestedObjects
from django.contrib.auth.models import User
from django.db import router, transaction
from django.db.models import Model

from judgements.configuration import live_state, teams
from judgements.models import ApiToken, AuditSubject, Budget, Membership, Panel, Suite, Team

# Each audited model: its subject and its target as its audit rows name it.
TARGETS: dict[type[Model], tuple[AuditSubject, str]] = {
    Panel: (AuditSubject.PANEL, "panel"),
    Budget: (AuditSubject.BUDGET, "budget"),
    Team: (AuditSubject.TEAM, "team"),
    User: (AuditSubject.USER, "user"),
    ApiToken: (AuditSubject.TOKEN, "token"),
    Suite: (AuditSubject.SUITE, "suite"),
}


def collected(objects: Iterable[Model]) -> tuple[list[Model], list[tuple[AuditSubject, Model]]]:
    """The audited rows deleting `objects` deletes, themselves included, and the audited
    state of others it changes: (subject, the row its state is read from)."""
    found = list(objects)
    if not found:
        return [], []
    # The admin's own collector: it never deletes fast, so every row that goes is listed.
    collector = NestedObjects(using=router.db_for_write(type(found[0])))
    collector.collect(found)
    going = {(model, row.pk) for model, rows in collector.data.items() for row in rows}
    deleted = [
        row
        for model, rows in collector.data.items()
        if model in TARGETS
        for row in sorted(rows, key=lambda row: row.pk)
    ]
    pks = {model: [row.pk for row in rows] for model, rows in collector.data.items()}
    changed: dict[tuple[AuditSubject, int], Model] = {}
    for field, _ in collector.field_updates:  # on_delete=SET_NULL: a team's panels, tokens
        if field.model in TARGETS:
            pointed = next((ids for model, ids in pks.items() if model is field.related_model), [])
            for row in field.model._default_manager.filter(**{f"{field.attname}__in": pointed}):
                changed[(TARGETS[field.model][0], row.pk)] = row
    # A user gone takes their memberships (a team's members) and reviewing (a panel's).
    memberships = Membership.objects.filter(pk__in=pks.get(Membership, []))
    for team in Team.objects.filter(pk__in=memberships.values("team_id")):
        changed[(AuditSubject.MEMBERSHIP, team.pk)] = team
        changed[(AuditSubject.TEAM, team.pk)] = team  # who reviews every panel of it
    reviewing = Panel.reviewers.through.objects.filter(pk__in=pks.get(Panel.reviewers.through, []))
    for panel in Panel.objects.filter(pk__in=reviewing.values("panel_id")):
        changed[(AuditSubject.PANEL, panel.pk)] = panel
    changed = {key: row for key, row in changed.items() if (type(row), row.pk) not in going}
    return deleted, [(subject, row) for (subject, _), row in sorted(changed.items())]


def going_with(objects: Iterable[Model]) -> list[Model]:
    """The audited rows deleting `objects` deletes, themselves included."""
    return collected(objects)[0]


def target_of(subject: AuditSubject, row: Model) -> str:
    return f"{TARGETS[live_state.KINDS[subject].model][1]} {row.pk}"


def record_deleted(rows: Iterable[Model], by: User | None, skip: Iterable[Model] = ()) -> None:
    """An audit row for each row about to be deleted (but those in `skip`, which the
    caller records itself)."""
    skipped = {(type(row), row.pk) for row in skip}
    for row in rows:
        if (type(row), row.pk) in skipped:
            continue
        subject, word = TARGETS[type(row)]
        teams.record(subject, f"{word} {row.pk}", by, live_state.KINDS[subject].state(row), None)


@contextmanager
def audited(
    objects: Iterable[Model], by: User | None, skip: Iterable[Model] = ()
) -> Iterator[None]:
    """Around the deletion of `objects` (inside the caller's transaction): an audit row
    for each audited row it deletes (but those in `skip`) before, and for each whose
    audited state it changes after."""
    deleted, changed = collected(objects)
    before = [(subject, row, live_state.KINDS[subject].state(row)) for subject, row in changed]
    record_deleted(deleted, by, skip)
    yield
    for subject, row, state in before:
        kind = live_state.KINDS[subject]
        now = kind.model._default_manager.get(pk=row.pk)
        teams.record(subject, target_of(subject, row), by, state, kind.state(now))


def delete(objects: Iterable[Model], by: User | None) -> None:
    """Delete `objects` with an audit row for each audited row that goes or changes."""
    found = list(objects)
    with transaction.atomic(), audited(found, by):
        for row in found:
            row.delete()
