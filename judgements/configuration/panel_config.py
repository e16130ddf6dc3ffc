"""A saved panel created, replaced and deleted as configuration (the API's
/api/panels/): validated as the pages validate it (saving.PanelForm and the agents'
formset) and as docs/teams.md rules reviewers, versioned for If-Match
(judgements/core/etags.py), and audited with who made the change.

A write takes the whole panel: a setting left out takes its default, as when the panel
is created. A team left out is the caller's token's team (none for a personal token).
An example panel (no owner, no team, everyone's to use) is made and changed by staff
only, and stays an example: `"example": true` says so in every write of it.
"""

from django.contrib.auth.models import User
from django.db import transaction

from judgements.configuration import deletions, escalation_config, names, saving, teams
from judgements.configuration.change_request import Change
from judgements.configuration.panel_fields import PanelDefaults, PanelFields, PanelSettings
from judgements.core import etags
from judgements.core.errors import Forbidden, InvalidInput, NotFound
from judgements.models import AuditSubject, Panel, Team, is_id
from judgements.panels import variant_setting

DEFAULTS: PanelDefaults = {
    "description": "",
    "hold_contested": None,
    "run_checks": None,
    # Not set: the site's default (panels/variant_setting.py variants_for).
    "prompt_variants": None,
    # None: its unkept verdicts go straight to a person (docs/escalation.md).
    "escalate_to": None,
    "notify_contested": False,
    "reviewers": [],
    "team_reviews": False,
    "four_eyes": False,
    "example": False,
}
STAYS_EXAMPLE = 'An example panel stays one: send "example": true.'
STAYS_OWNED = "A panel of its owner's does not become an example: create one instead."


def visible_panel(panel_id: int, by: User) -> Panel:
    """The panel, if `by` may see it; another team's is not found."""
    panel = Panel.objects.select_related("owner", "team").filter(pk=panel_id).first()
    if not is_id(panel_id) or panel is None or not panel.visible_to(by):
        raise NotFound(f"No panel {panel_id}.")
    return panel


def editable_panel(panel_id: int, by: User) -> Panel:
    """The panel, if `by` may change it (Panel.editable_by): an example only staff."""
    panel = visible_panel(panel_id, by)
    if not panel.editable_by(by):
        raise Forbidden("Only staff may change an example panel.")
    return panel


def create(change: Change, body: PanelFields) -> saving.Written:
    """A new panel of the caller's, as `body` says; InvalidInput names each field at fault."""
    with transaction.atomic():
        example = bool(body.get("example"))
        if example and not change.by.is_staff:
            raise Forbidden("Only staff make example panels.")
        written = write(change, None, None if example else change.by, body)
        teams.record(
            AuditSubject.PANEL,
            teams.panel_target(written.panel),
            change.by,
            None,
            written.panel.config_state(),
        )
        return written


def replace(change: Change, panel_id: int, body: PanelFields) -> saving.Written:
    """The panel made exactly as `body` says, provided it is still as the caller read it
    (change.if_match); voids its certificates when an agent's model or criteria, or its
    prompt variants, changed."""
    with transaction.atomic():
        panel = editable_panel(panel_id, change.by)
        etags.check(change.if_match, "panel", panel.etag())
        before = panel.config_state()
        written = write(change, panel, panel.owner, body)
        teams.record(
            AuditSubject.PANEL,
            teams.panel_target(written.panel),
            change.by,
            before,
            written.panel.config_state(),
        )
        return written


def delete(change: Change, panel_id: int) -> None:
    """Delete the panel, provided it is still as the caller read it. The judgements
    started from it keep their copy of its agents."""
    with transaction.atomic():
        panel = editable_panel(panel_id, change.by)
        etags.check(change.if_match, "panel", panel.etag())
        before = panel.config_state()
        escalating = list(Panel.objects.filter(escalate_to=panel).values_list("name", flat=True))
        if escalating:
            # Never a silent change of another panel's escalation.
            raise InvalidInput(
                {
                    escalation_config.FIELD: [
                        f"The panel {escalating[0]!r} escalates to it: change that first."
                    ]
                }
            )
        target = teams.panel_target(panel)
        with deletions.audited([panel], change.by, skip=[panel]):
            if not Panel.objects.filter(pk=panel.pk, version=panel.version).delete()[0]:
                raise etags.Stale("panel", None)
        teams.record(AuditSubject.PANEL, target, change.by, before, None)


def escalation_errors(
    change: Change,
    panel: Panel | None,
    owner: User | None,
    team: Team | None,
    reference: str | int | None,
) -> tuple[Panel | None, dict[str, list[str]]]:
    """The panel `reference` names for the panel as it will be written (in `team`), and
    what is wrong with its escalation, by field: `escalate_to` (the rule for every level
    of its chain), and `team` when it moves where a panel that escalates to it may not
    escalate (refused instead of that chain ending silently a level early)."""
    errors: dict[str, list[str]] = {}
    if moved := escalation_config.incoming_errors(panel, owner, team):
        errors["team"] = moved
    target, wrong = escalation_config.resolve(
        reference, change.by, owner=owner, team=team, panel=panel
    )
    if wrong:
        errors[escalation_config.FIELD] = wrong
    return target, errors


def write(
    change: Change, panel: Panel | None, owner: User | None, body: PanelFields
) -> saving.Written:
    """Validate everything `body` says (all its errors at once), then store it."""
    default_team = None if change.team is None or body.get("example") else change.team.name
    fields: PanelFields = {**DEFAULTS, "team": default_team, **body}
    errors: dict[str, list[str]] = {}
    if panel is not None and fields["example"] != (panel.owner_id is None):
        errors["example"] = [STAYS_EXAMPLE if panel.owner_id is None else STAYS_OWNED]
    if fields["example"] and fields["team"] is not None:
        errors["team"] = ["An example panel belongs to no team: it is everyone's."]
    team = None
    if fields["team"] is not None and "team" not in errors:
        team = names.team_named(fields["team"], change.by)
        if team is None:
            errors["team"] = [names.no_team(fields["team"], change.by)]
    try:
        fields["prompt_variants"] = variant_setting.checked_variants(fields["prompt_variants"])
    except ValueError as exc:
        errors["prompt_variants"] = [str(exc)]
    target = None
    if "team" not in errors:
        target, wrong = escalation_errors(change, panel, owner, team, fields["escalate_to"])
        errors |= wrong
    reviewers, unknown = names.users_named(fields["reviewers"])
    if unknown:
        errors["reviewers"] = [names.no_users(unknown)]
    try:
        panel_form, formset = saving.bind_json(
            owner, panel, fields["name"], fields["description"], fields["agents"], None, team
        )
    except InvalidInput as exc:
        errors = exc.errors | errors
    if "team" not in errors and "reviewers" not in errors:
        errors |= teams.reviewing_errors(team, reviewers, fields["team_reviews"])
    if errors:
        raise InvalidInput(errors)
    settings = PanelSettings(
        hold_contested=fields["hold_contested"],
        run_checks=fields["run_checks"],
        notify_contested=fields["notify_contested"],
        prompt_variants=fields["prompt_variants"],
        team=team,
        escalate_to=target,
    )
    version = None if panel is None else panel.version
    written = saving.write(panel_form, formset, panel, settings=settings, version=version)
    teams.set_reviewing(
        written.panel,
        change.by,
        reviewers=reviewers,
        team_reviews=fields["team_reviews"],
        four_eyes=fields["four_eyes"],
    )
    return written
