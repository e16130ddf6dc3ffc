"""The saved panels' pages: the list of panels a user may use, a panel's edit form, and
certifying a panel from that page (its certificate shown beside the form).

A panel is edited by its owner or by staff; an example panel (no owner) by staff only.
Another user's panel does not exist, as far as a user can tell (404); an example they
may use but not edit answers 403. Editing a panel changes no judgement already started
from it: those copied its agents (saved_panels).
"""

from typing import TypedDict

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from judgements.configuration import saving
from judgements.core import calibration
from judgements.core.errors import InvalidInput
from judgements.evaluations import calibrate, cascade, certify
from judgements.infrastructure.forms import error_summary, invalid_utf8_fields
from judgements.intake import cases
from judgements.models import Panel
from judgements.panels import saved_panels, variant_setting
from judgements.spending import budgets
from judgements.web import certificates
from judgements.web.signed_in import signed_in_user


@login_required
@require_GET
def panel_list(request: HttpRequest) -> HttpResponse:
    panels = list(saved_panels.visible(signed_in_user(request)))
    rows = [
        (
            panel,
            panel.editable_by(signed_in_user(request)),
            certificates.view_of(certificates.shown_certificate(panel)),
        )
        for panel in panels
    ]
    return render(request, "judgements/panel_list.html", {"rows": rows})


def editable_panel(request: HttpRequest, panel_id: int) -> Panel:
    """The panel, if this user may edit it: another user's is not found (404), an example
    a non-staff user may use but not edit is refused (403). Asked of the database, as the
    lists ask it (SharedQuerySet.visible_to, editable_by): one query when it may."""
    user = signed_in_user(request)
    panels = Panel.objects.select_related("owner", "team")
    panel = panels.editable_by(user).filter(pk=panel_id).first()
    if panel is not None:
        return panel
    if panels.visible_to(user).filter(pk=panel_id).exists():
        raise PermissionDenied("Only staff may edit an example panel.")
    raise Http404("No panel matches the given query.")


@login_required
@require_http_methods(["GET", "POST"])
def panel_edit(request: HttpRequest, panel_id: int) -> HttpResponse:
    panel = editable_panel(request, panel_id)
    if request.method == "POST":
        panel_form = saving.PanelForm(request.POST, owner=panel.owner, panel=panel, team=panel.team)
        formset = saving.agents_formset(request.POST)
        not_utf8 = (
            invalid_utf8_fields(request.body)
            if request.content_type == "application/x-www-form-urlencoded"
            else set()
        )
        if saving.validated(panel_form, formset, not_utf8):
            try:
                saving.store(panel_form, formset, panel, signed_in_user(request))
            except InvalidInput as exc:
                # A name taken meanwhile, or an escalation the rule refuses: beside its field.
                for field, refusals in exc.errors.items():
                    panel_form.add_error(field, refusals)
            else:
                messages.success(request, f"Saved the panel {panel_form.cleaned_data['name']}.")
                return redirect("panel-list")
        return render_edit(request, panel, panel_form, formset, status=400)
    return render_edit(request, panel, *unbound_forms(panel))


@login_required
@require_POST
def panel_certify(request: HttpRequest, panel_id: int) -> HttpResponse:
    """The edit page's "Certify this panel": measure it on its finished evaluation runs of
    its current agents (judgements/evaluations/certify.py). Back to the page, which shows
    the certificate, or the page again with the form as posted and each error beside
    its field (400)."""
    panel = editable_panel(request, panel_id)
    form = certificates.CertifyForm(request.POST, prefix="certify")
    if form.is_valid():
        try:
            found = certificates.certify_panel(panel, signed_in_user(request), form)
        except InvalidInput as exc:
            form.add_refusal(exc.errors)
        else:
            messages.success(request, f"Measured the panel {panel.name}: {found.describe()}")
            return redirect(panel.get_absolute_url() + "#certify")
    return render_edit(request, panel, *unbound_forms(panel), status=400, certify_form=form)


@login_required
@require_POST
def panel_certify_cascade(request: HttpRequest, panel_id: int) -> HttpResponse:
    """The edit page's "Certify the escalation chain" (judgements/evaluations/cascade.py):
    back to the page, which shows the cascade's report, or the page again with each error
    beside its field (400)."""
    panel = editable_panel(request, panel_id)
    form = certificates.CertifyForm(request.POST, prefix="cascade")
    if form.is_valid():
        try:
            found = cascade.certify_cascade(
                panel,
                user=signed_in_user(request),
                target=form.cleaned_data["target"] / 100,
                delta=form.cleaned_data["delta"],
            )
        except InvalidInput as exc:
            form.add_refusal(exc.errors)
        else:
            messages.success(request, f"Measured the chain of {panel.name}: {found.describe()}")
            return redirect(panel.get_absolute_url() + "#cascade")
    return render_edit(request, panel, *unbound_forms(panel), status=400, cascade_form=form)


def unbound_forms(panel: Panel) -> tuple[saving.PanelForm, cases.BaseAgentFormSet]:
    """The edit form and the agents' formset as the panel stands."""
    initial = {
        "name": panel.name,
        "description": panel.description,
        "hold_contested": cases.hold_choice(panel.hold_contested),
        "run_checks": cases.hold_choice(panel.run_checks),
        "prompt_variants": variant_setting.variants_text(panel.prompt_variants),
        "escalate_to": "" if panel.escalate_to_id is None else str(panel.escalate_to_id),
    }
    panel_form = saving.PanelForm(initial=initial, owner=panel.owner, panel=panel, team=panel.team)
    formset = saving.agents_formset(agents=saved_panels.agents_of(panel))
    return panel_form, formset


def render_edit(
    request: HttpRequest,
    panel: Panel,
    panel_form: saving.PanelForm,
    formset: cases.BaseAgentFormSet,
    status: int = 200,
    certify_form: certificates.CertifyForm | None = None,
    cascade_form: certificates.CertifyForm | None = None,
) -> HttpResponse:
    """The edit page: the panel's form, its certificate and the form that certifies it."""
    shown = certificates.shown_certificate(panel)
    certify_form = certify_form or certificates.CertifyForm(prefix="certify")
    context = {
        "panel": panel,
        "panel_form": panel_form,
        "formset": formset,
        "error_summary": error_summary(panel_form, formset=formset) if panel_form.is_bound else [],
        "certificate": certificates.view_of(shown),
        "eligible_runs": certify.eligible_runs(panel),
        "variants_in_use": "+".join(sorted(variant_setting.variants_for(panel))) or "no variant",
        "calibration": calibration_view(panel),
        "certify_form": certify_form,
        "certify_errors": error_summary(certify_form) if certify_form.is_bound else [],
        "budgets": [budgets.state_of(b) for b in budgets.budgets_for(None, panel.team_id, panel)],
        # Its escalation chain's certificate and report (docs/escalation.md).
        "cascade": (found := cascade.current(panel) if panel.escalate_to_id else None),
        "cascade_rows": [] if found is None else cascade.report_rows(found),
        "cascade_accuracy": "" if found is None else cascade.accuracy_heading(found),
        "cascade_form": cascade_form or certificates.CertifyForm(prefix="cascade"),
        "cascade_errors": error_summary(cascade_form) if cascade_form is not None else [],
    }
    return render(request, "judgements/panel_edit.html", context, status=status)


class CalibratedAgent(TypedDict):
    name: str
    offset: float | None
    samples: int


class CalibrationView(TypedDict):
    """A panel's stored calibration as its edit page shows it (`calibration_view`)."""

    holds: bool
    runs: list[int]
    agents: list[CalibratedAgent]


def calibration_view(panel: Panel) -> CalibrationView | None:
    """The panel's stored calibration as the edit page shows it: each agent's offset (None:
    too few labels to learn one), the runs it was learned from, and whether it still holds
    for the panel's agents and variants. None: never learned."""
    if not panel.calibration:
        return None
    stored = calibration.PanelCalibration.from_dict(panel.calibration)
    names = [agent["name"] for agent in panel.agents]
    return {
        "holds": calibrate.holds(panel),
        "runs": list(stored.runs),
        "agents": [
            {"name": name, "offset": offset, "samples": samples}
            for name, offset, samples in zip(names, stored.offsets, stored.samples, strict=False)
        ],
    }
