"""Saving panels: the forms that edit a panel (on the new-judgement page and the panel's
own page), a panel given as JSON, and the shipped examples created once.

A saved panel is three agents under a name, to start judgements from. Its agents are
validated exactly as a judgement's are (intake/cases.py's AgentFormSet) and stored as
JSON. A judgement started from a panel copies them into its own Agent rows and records
the panel (Judgement.panel), so editing the panel later changes no judgement. Example
panels have no owner; they ship as YAML files in judgements/examples/panels/ and
`manage.py load_examples` creates them (ensure_examples). Looking a panel up is
panels/saved_panels.py's; choosing one of those a user may use, panel_choice.py's.
"""

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from django import forms as django_forms
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from judgements.audit import record as chain_record
from judgements.configuration import escalation_config, teams, versions
from judgements.configuration.panel_fields import PanelRow, PanelSettings
from judgements.core import prompt_variants, text
from judgements.core.errors import InvalidInput
from judgements.infrastructure.forms import TextField, is_valid, refuse_not_utf8
from judgements.intake import cases, schemas
from judgements.intake.case import CaseAgent
from judgements.llm.local.files import BUNDLED_MODEL_NAME
from judgements.models import AuditSubject, Certificate, Panel, Team
from judgements.models.panels import PanelState, StoredAgent
from judgements.panels import variant_setting
from magi_client import directory as config_directory

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples" / "panels"
NAME_MAX_CHARS = 100  # Panel.name's max_length
DESCRIPTION_MAX_CHARS = 1_000
VARIANTS_MAX_CHARS = 200
VARIANTS_HELP = (
    "Names joined with +: "
    + ", ".join(variant.value for variant in prompt_variants.Variant)
    + f" (docs/panel-quality.md). Blank: the site's default; {variant_setting.NO_VARIANTS}: no "
    "variant, the prompts as first measured, whatever the default becomes."
)


class AnyPanelChoice(django_forms.ChoiceField):
    """A select of the panels a panel may escalate to, whose posted value is checked by
    the form's clean_escalate_to (configuration/escalation_config.py) rather than against
    the options: a panel the team may not use is refused in words that say why."""

    def valid_value(self, value: str) -> bool:
        return True


class PanelForm(django_forms.Form):
    """A panel's name and description; its agents are a cases.AgentFormSet beside it."""

    name = TextField(max_chars=NAME_MAX_CHARS)
    description = TextField(
        max_chars=DESCRIPTION_MAX_CHARS,
        required=False,
        widget=django_forms.Textarea(attrs={"rows": 2}),
        help_text="Optional: what the panel judges.",
    )
    hold_contested = django_forms.ChoiceField(
        choices=[
            ("", "As the deployment says"),
            ("yes", "Hold them until a person confirms or overrides them"),
            ("no", "Do not hold them: the panel's verdict is in force, marked contested"),
        ],
        required=False,
        label="Contested verdicts of judgements started from this panel",
    )
    run_checks = django_forms.ChoiceField(
        choices=[
            ("", "As the deployment says"),
            ("yes", "Run them: a second opinion and an injection screen per judgement"),
            ("no", "Do not run them: two calls fewer, and no signal from them"),
        ],
        required=False,
        label="Checks beside the vote",
    )
    prompt_variants = TextField(
        max_chars=VARIANTS_MAX_CHARS,
        required=False,
        label="Prompt variants",
        help_text=VARIANTS_HELP,
    )
    # The panel its unkept verdicts go to before a person (docs/escalation.md); its
    # choices are the panels its team may use (configuration/escalation_config.py).
    escalate_to = AnyPanelChoice(
        choices=[("", "Nobody: straight to a person")],
        required=False,
        label="Escalate unkept verdicts to",
        help_text="A contested verdict, or one outside the certificate, is judged again by "
        "this panel on the same content before it waits for a person.",
    )

    def __init__(
        self,
        *args: Any,
        owner: User | None = None,
        panel: Panel | None = None,
        team: Team | None = None,
        **kwargs: Any,
    ) -> None:
        """owner: whose panels the name must differ from (None: the examples); panel:
        the one being edited, whose own name is no clash; team: the team the panel is
        (or goes) in, whose panels its name must differ from instead."""
        super().__init__(*args, **kwargs)
        self.owner = owner
        self.panel = panel
        self.team = team
        escalate_to = self.fields["escalate_to"]
        assert isinstance(escalate_to, AnyPanelChoice)
        escalate_to.choices = [
            ("", "Nobody: straight to a person"),
            *(
                (str(p.pk), p.name if p.owner_id is not None else f"{p.name} (example)")
                for p in escalation_config.candidates(owner, team)
                if panel is None or p.pk != panel.pk
            ),
        ]

    def clean_escalate_to(self) -> Panel | None:
        """The panel chosen, looked up (escalation_config.lookup); the rule (the team's
        access, every level, no cycle) is checked by `write` for the panel as written."""
        chosen = self.cleaned_data.get("escalate_to") or None
        target, wrong = escalation_config.lookup(
            chosen, self.owner, owner=self.owner, team=self.team
        )
        if wrong:
            raise ValidationError(wrong[0], code="invalid")
        return target

    def clean_prompt_variants(self) -> list[str] | None:
        """The setting as typed (variant_setting.variants_from_text): None when blank."""
        try:
            return variant_setting.variants_from_text(
                self.cleaned_data.get("prompt_variants") or ""
            )
        except ValueError as exc:
            raise ValidationError(str(exc), code="invalid") from None

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if name_taken(name, self.owner, self.panel, self.team):
            raise ValidationError(self.name_clash(name), code="unique")
        return name

    def name_clash(self, name: str) -> str:
        """Why `name` is taken: in the panel's team, among the examples or its owner's."""
        if self.team is not None:
            return f"The team {self.team.name} already has a panel called {name!r}."
        whose = "An example panel" if self.owner is None else "A panel of the same owner"
        return f"{whose} is already called {name!r}."


def name_taken(
    name: str, owner: User | None, panel: Panel | None = None, team: Team | None = None
) -> bool:
    """Names clash as agent names do: "Deploy gate" and "deploy  GATE" are one name. A
    team's panel's name is unique in its team (the configuration files key on it: two
    teams may each have their "Deploy gate", even made by one person); any other panel's
    among its owner's panels outside a team (owner None: the examples)."""
    key = text.comparable_name(name)
    same = (
        Panel.objects.filter(team=team)
        if team is not None
        else Panel.objects.filter(owner=owner, team=None)
    )
    if panel is not None:
        same = same.exclude(pk=panel.pk)
    names = same.values_list("name", flat=True)
    return any(text.comparable_name(other) == key for other in names)


def agents_formset(
    data: Mapping[str, str] | None = None, agents: Sequence[StoredAgent] | None = None
) -> cases.BaseAgentFormSet:
    """The three agent forms bound to posted data, or to a panel's agents: bound, so a
    stored agent this deployment can no longer run (its model gone) shows its error as
    soon as the form does, instead of the page quietly selecting another model."""
    if agents is not None:
        data = cases.agent_fields(agents)
    # formset_factory builds a subclass of BaseAgentFormSet; its stub says only BaseFormSet.
    return cast(cases.BaseAgentFormSet, cases.AgentFormSet(data, prefix=cases.AGENT_PREFIX))


def errors_of(
    panel_form: PanelForm, formset: cases.BaseAgentFormSet | None
) -> dict[str, list[str]]:
    errors = {field: [str(m) for m in messages] for field, messages in panel_form.errors.items()}
    return errors if formset is None else errors | cases.agent_errors(formset)


def validated(
    panel_form: PanelForm, formset: cases.BaseAgentFormSet, not_utf8: AbstractSet[str] = frozenset()
) -> bool:
    """The panel's form and its agents' formset, both validated so every error shows at
    once; a posted field whose bytes were not UTF-8 refused (the form kit's
    refuse_not_utf8), asked only when there is one."""
    valid = all([panel_form.is_valid(), formset.is_valid()])
    if not_utf8:
        valid = refuse_not_utf8([panel_form, *formset.forms], not_utf8) and valid
    return valid


def store(
    panel_form: PanelForm,
    formset: cases.BaseAgentFormSet,
    panel: Panel | None = None,
    by: User | None = None,
) -> Panel:
    """Save validated forms as a new panel of panel_form.owner, or over `panel`, audited
    as made by `by` (None: the operator, the shipped examples) like the API's changes
    (configuration/panel_config.py), so the audit log holds the pages' panel changes too."""
    with transaction.atomic():
        return write(panel_form, formset, panel, audited=True, by=by).panel


@dataclass(frozen=True)
class Written:
    panel: Panel
    # The certificates the change voided: an agent's model or criteria, or the panel's
    # prompt variants, changed.
    voided: list[int]


def write(
    panel_form: PanelForm,
    formset: cases.BaseAgentFormSet,
    panel: Panel | None = None,
    *,
    settings: PanelSettings | None = None,
    version: int | None = None,
    audited: bool = False,
    by: User | None = None,
) -> Written:
    """Save validated forms as a new panel of panel_form.owner, or over `panel`, with
    `settings` (the API's team, checks and notification choices) over the form's. Over
    `panel`: one more version, refused (etags.Stale) when it is no longer at `version`
    (None: whatever it is, as the page saves), and its certificates for other agents or
    other prompt variants voided (its calibration is void by its own fingerprint).
    `audited`: the change recorded as made by `by`, its panel as configuration before
    and after (a page's change: what the form wrote over what it was); the API records
    its own, reviewers and all (configuration/panel_config.py)."""
    agents = [agent.stored() for agent in formset.agents()]
    fields: PanelRow = {
        "name": panel_form.cleaned_data["name"],
        "description": panel_form.cleaned_data["description"],
        "hold_contested": cases.HOLD_VALUES[panel_form.cleaned_data.get("hold_contested") or ""],
        "run_checks": cases.HOLD_VALUES[panel_form.cleaned_data.get("run_checks") or ""],
        "prompt_variants": panel_form.cleaned_data.get("prompt_variants"),
        "escalate_to": panel_form.cleaned_data.get("escalate_to"),
        "agents": agents,
        **(settings or PanelSettings()),
    }
    try:
        with transaction.atomic():
            if fields["escalate_to"] is not None:
                team = fields.get("team", panel_form.team)
                refuse_escalation(panel_form, panel, team, fields["escalate_to"])
            if panel is None:
                made = Panel.objects.create(owner=panel_form.owner, **fields)
                if audited:
                    target = teams.panel_target(made)
                    teams.record(AuditSubject.PANEL, target, by, None, made.config_state())
                return Written(made, [])
            before = panel.config_state() if audited else None
            versions.bump(
                Panel.objects, panel.pk, version, "panel", **fields, updated_at=timezone.now()
            )
            # A certificate holds for the agents and variants it measured and no others.
            panel.refresh_from_db()
            # A cascade's certificate (Certificate.levels) holds for its chain instead: it
            # is in force only while every level is as measured (panels/escalation_chain.py).
            voided = Certificate.objects.filter(panel=panel, levels__isnull=True).void_unless(
                variant_setting.fingerprint_of(panel)
            )
            chain_record.certificates_voided(voided)
            if before is not None:
                after = edited_state(before, fields)
                teams.record(AuditSubject.PANEL, teams.panel_target(panel), by, before, after)
    except IntegrityError:
        # Another request took the name between the check and the write.
        raise InvalidInput({"name": [f"A panel is already called {fields['name']!r}."]}) from None
    panel.refresh_from_db()
    return Written(panel, voided)


def edited_state(before: PanelState, fields: PanelRow) -> dict[str, object]:
    """A page's edit as configuration (Panel.config_state): what the form wrote over what
    the panel was, a page changing nothing else; the panel it escalates to by name."""
    target = fields.get("escalate_to")
    wrote = {**fields, "escalate_to": target.name if isinstance(target, Panel) else target}
    return {**before, **{key: value for key, value in wrote.items() if key in before}}


def refuse_escalation(
    panel_form: PanelForm, panel: Panel | None, team: Team | None, target: Panel
) -> None:
    """InvalidInput naming `escalate_to` when the panel, as it is about to be written (in
    `team`, its new one if it changes), may not escalate to `target`: the rule for every
    level of the chain and no cycle (configuration/escalation_config.py), read in the
    transaction that writes it, whoever wrote it (the page, the API, a directory)."""
    wrong = escalation_config.errors(panel, panel_form.owner, team, target)
    if wrong:
        raise InvalidInput({escalation_config.FIELD: wrong})


def save_panel(
    *,
    owner: User | None,
    name: object,
    description: object = "",
    agents: object,
    models: list[str] | None = None,
) -> Panel:
    """Validate a panel given as JSON and store it as a new panel of `owner`; InvalidInput
    names each invalid field (`name`, `agents[2].criteria`). `models`, when given, are the
    models allowed instead of the deployment's (the shipped examples: the bundled one)."""
    panel_form, formset = bind_json(owner, None, name, description, agents, models)
    return store(panel_form, formset)


def bind_json(
    owner: User | None,
    panel: Panel | None,
    name: object,
    description: object,
    agents: object,
    models: list[str] | None,
    team: Team | None = None,
) -> tuple[PanelForm, cases.BaseAgentFormSet]:
    errors: dict[str, list[str]] = {}
    for field, value in (("name", name), ("description", description)):
        if not isinstance(value, str):
            errors[field] = ["Must be a string."]
    # The agents as JSON are checked by a case's one validator (intake/schemas.py), under
    # the same paths and messages as the API's case: `agents[1].model`.
    checked: tuple[CaseAgent, ...] = ()
    try:
        checked = schemas.validated_agents(agents, models)
    except InvalidInput as exc:
        errors.update(exc.errors)
    if "name" in errors or "description" in errors:
        raise InvalidInput(errors)
    panel_form = PanelForm(
        {"name": name, "description": description}, owner=owner, panel=panel, team=team
    )
    if errors:
        # The panel's own fields named beside its agents', so every error shows at once.
        panel_form.is_valid()
        raise InvalidInput(errors_of(panel_form, None) | errors)
    formset = agents_formset(agents=[agent.stored() for agent in checked])
    if models is not None:
        for agent_form in formset.forms:
            agent_form.fields["model"].choices = [(model, model) for model in models]
    if not is_valid(panel_form, formset):
        raise InvalidInput(errors_of(panel_form, formset))
    return panel_form, formset


# The shipped examples.


def ensure_examples(root: Path = EXAMPLES_DIR.parent) -> None:
    """Create every example panel of judgements/examples/panels/ (`root`'s panels/) that
    does not exist yet (by name). Existing ones are left as they are, edits by staff
    included. Their agents run on the bundled model, so a new installation can judge with
    one click. The files are a configuration directory's shared panels
    (docs/config-as-code.md), read and checked as `magi apply` reads them."""
    try:
        shipped = config_directory.read(root)
    except config_directory.BadDirectory as bad:
        problems = {f"{p.file}:{p.line}: {p.field}": [p.message] for p in bad.problems}
        raise InvalidInput(problems) from None
    for spec in shipped.state.get("examples", {}).get("panels", []):
        name = spec["name"]
        if name_taken(name, None):
            continue
        try:
            save_panel(
                owner=None,
                name=name,
                description=spec["description"],
                agents=spec["agents"],
                models=[BUNDLED_MODEL_NAME],
            )
        except InvalidInput as exc:
            if name_taken(name, None):
                continue  # another process created it meanwhile
            file = shipped.sources[f"examples.panels.{name}"].file
            raise InvalidInput({f"{file}: {f}": m for f, m in exc.errors.items()}) from None
