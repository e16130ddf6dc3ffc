"""Deleting configuration, audited whatever deletes it: the admin's delete (one row or
"delete selected"), and what a deletion takes with it (a user's budgets and tokens, a
panel's budgets, a team's budgets): each gets its audit row (after: none) in the same
transaction, so `audit verify` finds every deletion in the log and none of these rows
gone unexplained (configuration/live_state.py)."""

from collections.abc import Iterable

from django.contrib.admin.utils import NestedObjects
from django.contrib.auth.models import User
from django.db import router, transaction
from django.db.models import Model

from judgements.configuration import live_state, teams
from judgements.models import ApiToken, AuditSubject, Budget, Panel, Team

# Each audited model: its subject and its target as its audit rows name it.
TARGETS: dict[type[Model], tuple[AuditSubject, str]] = {
    Panel: (AuditSubject.PANEL, "panel"),
    Budget: (AuditSubject.BUDGET, "budget"),
    Team: (AuditSubject.TEAM, "team"),
    User: (AuditSubject.USER, "user"),
    ApiToken: (AuditSubject.TOKEN, "token"),
}


def going_with(objects: Iterable[Model]) -> list[Model]:
    """The audited rows deleting `objects` deletes, themselves included."""
    found = list(objects)
    if not found:
        return []
    # The admin's own collector: it never deletes fast, so every row that goes is listed.
    collector = NestedObjects(using=router.db_for_write(type(found[0])))
    collector.collect(found)
    return [
        row
        for model, rows in collector.data.items()
        if model in TARGETS
        for row in sorted(rows, key=lambda row: row.pk)
    ]


def record_deleted(rows: Iterable[Model], by: User | None, skip: Iterable[Model] = ()) -> None:
    """An audit row for each row about to be deleted (but those in `skip`, which the
    caller records itself)."""
    skipped = {(type(row), row.pk) for row in skip}
    for row in rows:
        if (type(row), row.pk) in skipped:
            continue
        subject, word = TARGETS[type(row)]
        _, state_of, _ = live_state.KINDS[subject]
        teams.record(subject, f"{word} {row.pk}", by, state_of(row), None)


def delete(objects: Iterable[Model], by: User | None) -> None:
    """Delete `objects` with an audit row for each audited row that goes."""
    found = list(objects)
    with transaction.atomic():
        record_deleted(going_with(found), by)
        for row in found:
            row.delete()
