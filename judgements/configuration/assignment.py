"""Giving a panel, a suite or a token to a team from the command line (`manage.py team
assign`), audited as every other change of them: its audit row holds the state before
and after, so `audit verify` (configuration/live_state.py) finds the new team in the log
and no change it cannot explain."""

from collections.abc import Callable

from django.contrib.auth.models import User
from django.db import transaction

from judgements.configuration import people, suite_config, teams
from judgements.models import ApiToken, AuditSubject, Panel, Suite, Team
from judgements.models.panels import PanelState


def audited_as(
    thing: Panel | Suite | ApiToken,
) -> tuple[
    AuditSubject, str, Callable[[], PanelState | suite_config.SuiteAuditState | people.TokenState]
]:
    """Its subject, its target and its state as its own audit rows write them."""
    if isinstance(thing, Panel):
        return AuditSubject.PANEL, teams.panel_target(thing), thing.config_state
    if isinstance(thing, Suite):
        return (
            AuditSubject.SUITE,
            suite_config.target(thing),
            lambda: suite_config.audit_state(thing),
        )
    return AuditSubject.TOKEN, people.token_target(thing.pk), lambda: people.token_state(thing)


def assign(thing: Panel | Suite | ApiToken, team: Team, by: User | None) -> None:
    """Give `thing` to `team`, audited (`by` None: the operator's command line)."""
    subject, target, state = audited_as(thing)
    with transaction.atomic():
        before = state()
        teams.assign(thing, team)
        teams.record(subject, target, by, before, state())
