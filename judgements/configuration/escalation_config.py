"""Which panel a saved panel escalates to (Panel.escalate_to, docs/escalation.md), as the
panel's page, the API and a configuration directory name it: by id or by name, looked up
among the panels the panel's team may use (panels/escalation_chain.py's rule), and checked for
every level of the chain it starts and for cycles. Each error is the field's:
`escalate_to`.
"""

from django.contrib.auth.models import User

from judgements.core import text
from judgements.core.errors import InvalidInput
from judgements.models import Panel, Team
from judgements.panels import escalation_chain, saved_panels

FIELD = "escalate_to"


def candidates(owner: User | None, team: Team | None) -> list[Panel]:
    """The panels a panel of `owner` in `team` may escalate to, by name: the team's (or
    the owner's outside a team), then the examples."""
    mine = (
        Panel.objects.filter(team=team)
        if team is not None
        else Panel.objects.filter(owner=owner, team=None)
        if owner is not None
        else Panel.objects.none()
    )
    examples = Panel.objects.filter(owner=None, team=None)
    return [*mine.order_by("name", "id"), *examples.order_by("name", "id")]


def resolve(
    reference: str | int | None,
    by: User | None,
    *,
    owner: User | None,
    team: Team | None,
    panel: Panel | None,
) -> tuple[Panel | None, list[str]]:
    """The panel `reference` names for a panel of `owner` in `team` (`panel`: the one being
    changed, None for a new one), and what is wrong with it (empty: nothing): `lookup`,
    then the whole rule (`errors`). None names no panel: its verdicts go straight to a
    person. `by`: who asks (None: look only among the candidates)."""
    found, wrong = lookup(reference, by, owner=owner, team=team)
    if found is None or wrong:
        return found, wrong
    return found, errors(panel, owner, team, found)


def lookup(
    reference: str | int | None, by: User | None, *, owner: User | None, team: Team | None
) -> tuple[Panel | None, list[str]]:
    """The panel `reference` names among those a panel of `owner` in `team` may escalate
    to, else among those `by` may see (the rule then refuses it in words that name it),
    and the error when it names none of them. The rule itself is `errors`': the page's
    form looks the panel up, and saving.write checks the rule for the panel as written."""
    if reference is None or reference == "":
        return None, []
    found = _named(reference, candidates(owner, team))
    if found is None and by is not None:
        # A panel `by` may see but the team may not use is named in the refusal; one they
        # may not see is as unknown as one that does not exist.
        try:
            found = saved_panels.resolve(reference, by)
        except InvalidInput:
            found = None
    if found is None:
        if isinstance(reference, int) or saved_panels.is_decimal_id(reference):
            shown = str(reference)
        else:
            shown = repr(text.escaped(reference))
        return None, [f"No panel {shown} that this panel's team may use."]
    return found, []


def errors(panel: Panel | None, owner: User | None, team: Team | None, target: Panel) -> list[str]:
    """What is wrong with a panel of `owner` in `team` (`panel`: the one being changed,
    None for a new one) escalating to `target`: the access rule for every level of the
    chain it starts, and no cycle (panels/escalation_chain.py target_errors)."""
    # The rule reads the panel as it will be saved (its team may be changing); unsaved.
    subject = Panel(
        pk=None if panel is None else panel.pk,
        owner=owner,
        team=team,
        name="this panel" if panel is None else panel.name,
    )
    return escalation_chain.target_errors(subject, target)


def incoming_errors(panel: Panel | None, owner: User | None, team: Team | None) -> list[str]:
    """What moving `panel` (None: a new one, which nothing escalates to) to `team` would
    break: each panel that escalates to it and may not escalate to a panel of `team`.
    Refused, naming the panel to change first, instead of the chain stopping silently at
    the level before it (issue 70)."""
    if panel is None or panel.pk is None or panel.team_id == (None if team is None else team.pk):
        return []
    moved = Panel(pk=panel.pk, owner=owner, team=team, name=panel.name)
    before = Panel.objects.filter(escalate_to=panel).select_related("team").order_by("name", "id")
    return [
        f"The panel {source.name!r} escalates to it: {escalation_chain.refusal(source, moved)} "
        f"Change {source.name!r}'s escalation first."
        for source in before
        if not escalation_chain.may_escalate(source, moved)
    ]


def _named(reference: str | int, panels: list[Panel]) -> Panel | None:
    if isinstance(reference, int) or saved_panels.is_decimal_id(str(reference)):
        wanted = int(reference)
        return next((p for p in panels if p.pk == wanted), None)
    key = text.comparable_name(reference)
    return next((p for p in panels if text.comparable_name(p.name) == key), None)
