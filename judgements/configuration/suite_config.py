"""Evaluation suites as configuration (the API's /api/suites/): uploaded as JSONL as
before, now also given to a team, replaced and deleted, versioned for If-Match and
audited with who made the change. A suite is read and validated as evaluations/suites.py
reads every suite.

A suite that evaluation runs were made on keeps its cases: their reports point at them.
Replacing it with the same cases (a new name or description, another team) is allowed;
other cases, or deleting it, answer 409.
"""

import hashlib
import json
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction

from judgements.configuration import names, teams, versions
from judgements.configuration.change_request import Change
from judgements.core import etags, text
from judgements.core.errors import Conflict, Forbidden, InvalidInput, NotFound
from judgements.evaluations import suites
from judgements.models import AuditSubject, EvaluationRun, Suite, Team, is_id
from judgements.models.panels import SuiteState


@dataclass(frozen=True)
class Upload:
    """A suite as sent: its name, description, team (None: the token's) and JSONL;
    `example`: staff's, shipped-like, with no owner and no team."""

    name: str
    description: str
    team: str | None
    data: bytes
    example: bool = False


class SuiteAuditState(SuiteState):
    """A suite as the audit records it: its configuration, then its cases' ids and a
    digest of their content, keys in its rows' order."""

    cases: list[str]
    digest: str


def target(suite: Suite) -> str:
    return f"suite {suite.pk} ({suite.name})"


def audit_state(suite: Suite) -> SuiteAuditState:
    """What the audit records: the suite's configuration, its cases' ids and a digest of
    their content (the cases themselves are in its JSONL)."""
    cases = suites.cases_of(suite)
    digest = hashlib.sha256(json.dumps(cases, sort_keys=True).encode()).hexdigest()
    return {**suite.config_state(), "cases": [case["id"] for case in cases], "digest": digest}


def visible_suite(suite_id: int, by: User) -> Suite:
    suite = Suite.objects.select_related("owner", "team").filter(pk=suite_id).first()
    if not is_id(suite_id) or suite is None or not suite.visible_to(by):
        raise NotFound(f"No suite {suite_id}.")
    return suite


def editable_suite(suite_id: int, by: User) -> Suite:
    suite = visible_suite(suite_id, by)
    if not suite.editable_by(by):
        raise Forbidden("Only staff may change a suite shipped with MAGI.")
    return suite


def create(change: Change, upload: Upload) -> Suite:
    """A new suite of the caller's, its team the one named or the token's; an example
    (staff only) has neither."""
    if upload.example and not change.by.is_staff:
        raise Forbidden("Only staff make example suites.")
    with transaction.atomic():
        team = team_of(change, upload)
        check_name_in_team(team, upload.name, None)
        owner = None if upload.example else change.by
        return made(change.by, owner, team, upload)


def made(by: User | None, owner: User | None, team: Team | None, upload: Upload) -> Suite:
    """The one way a suite is stored, audited with who made it (None: the operator's
    command line): the API and the page (`create`), `manage.py suite import`, `manage.py
    evaluate`'s suite from a file and the shipped examples (`ensure_examples`)."""
    with transaction.atomic():
        suite = suites.import_suite(
            name=upload.name,
            description=upload.description,
            owner=owner,
            data=upload.data,
            team=team,
        )
        if team is not None:
            teams.assign(suite, team)
        teams.record(AuditSubject.SUITE, target(suite), by, None, audit_state(suite))
        return suite


def ensure_examples() -> None:
    """Create the shipped suites (owner None) that do not exist yet: a starter, a red-team
    and a held-out suite per example panel, named like their files. An existing suite is left
    as it is, since runs report against its cases."""
    existing = set(Suite.objects.filter(owner=None).values_list("name", flat=True))
    for path in suites.example_files():
        if path.stem in existing:
            continue
        description = suites.example_description(path.stem)
        try:
            made(None, None, None, Upload(path.stem, description, None, path.read_bytes()))
        except InvalidInput as exc:
            if set(exc.errors) != {"name"}:
                raise  # a shipped file that does not parse is a bug, not a user's error


def replace(change: Change, suite_id: int, upload: Upload) -> Suite:
    """The suite made as `upload` says, if it is still as the caller read it."""
    with transaction.atomic():
        suite = editable_suite(suite_id, change.by)
        etags.check(change.if_match, "suite", suite.etag())
        if upload.example != (suite.owner_id is None):
            stays = (
                "An example suite stays one: send example=true."
                if suite.owner_id is None
                else ("A suite of its owner's does not become an example: upload one instead.")
            )
            raise InvalidInput({"example": [stays]})
        team = team_of(change, upload)
        check_name_in_team(team, upload.name, suite)
        name, description, cases = suites.validated(
            upload.name, upload.description, suite.owner, upload.data, suite, team
        )
        before = audit_state(suite)
        if cases != suites.cases_of(suite) and EvaluationRun.objects.filter(suite=suite).exists():
            raise Conflict(
                "Evaluation runs were made on this suite: its cases stay as they are. Upload "
                "the new cases as another suite."
            )
        versions.bump(
            Suite.objects, suite.pk, suite.version, "suite",
            name=name, description=description, team=team,
        )  # fmt: skip
        suite.refresh_from_db()
        suites.store_cases(suite, cases)
        teams.record(AuditSubject.SUITE, target(suite), change.by, before, audit_state(suite))
        return suite


def delete(change: Change, suite_id: int) -> None:
    with transaction.atomic():
        suite = editable_suite(suite_id, change.by)
        etags.check(change.if_match, "suite", suite.etag())
        if EvaluationRun.objects.filter(suite=suite).exists():
            raise Conflict("Evaluation runs were made on this suite: it stays for their reports.")
        before, where = audit_state(suite), target(suite)
        if not Suite.objects.filter(pk=suite.pk, version=suite.version).delete()[0]:
            raise etags.Stale("suite", None)
        teams.record(AuditSubject.SUITE, where, change.by, before, None)


def team_of(change: Change, upload: Upload) -> Team | None:
    if upload.example:
        if upload.team is not None:
            raise InvalidInput({"team": ["An example suite belongs to no team: it is everyone's."]})
        return None
    if upload.team is None:
        return change.team
    team = names.team_named(upload.team, change.by)
    if team is None:
        raise InvalidInput({"team": [names.no_team(upload.team, change.by)]})
    return team


def check_name_in_team(team: Team | None, name: str, suite: Suite | None) -> None:
    """A team's suites are told apart by name, as its panels are."""
    if team is None or not isinstance(name, str):
        return
    key = text.comparable_name(name)
    others = Suite.objects.filter(team=team)
    if suite is not None:
        others = others.exclude(pk=suite.pk)
    if any(text.comparable_name(other) == key for other in others.values_list("name", flat=True)):
        raise InvalidInput({"name": [f"The team {team.name} already has a suite called {name!r}."]})
