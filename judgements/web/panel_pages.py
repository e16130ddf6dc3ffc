"""The saved panels' pages: the list of panels a user may use, and a panel's edit form.

A panel is edited by its owner or by staff; an example panel (no owner) by staff only.
Another user's panel does not exist, as far as a user can tell (404); an example they
may use but not edit answers 403. Editing a panel changes no judgement already started
from it: those copied its agents (saved_panels).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from judgements.core.errors import InvalidInput
from judgements.intake import cases
from judgements.models import Panel
from judgements.panels import saved_panels, saving


@login_required
@require_GET
def panel_list(request: HttpRequest) -> HttpResponse:
    panels = list(saved_panels.visible(request.user))
    rows = [(panel, panel.editable_by(request.user)) for panel in panels]
    return render(request, "judgements/panel_list.html", {"rows": rows})


@login_required
@require_http_methods(["GET", "POST"])
def panel_edit(request: HttpRequest, panel_id: int) -> HttpResponse:
    panel = get_object_or_404(Panel.objects.select_related("owner"), pk=panel_id)
    if not panel.visible_to(request.user):
        raise Http404("No panel matches the given query.")
    if not panel.editable_by(request.user):
        raise PermissionDenied("Only staff may edit an example panel.")
    if request.method == "POST":
        panel_form = saving.PanelForm(request.POST, owner=panel.owner, panel=panel)
        formset = saving.agents_formset(request.POST)
        not_utf8 = (
            cases.invalid_utf8_fields(request.body)
            if request.content_type == "application/x-www-form-urlencoded"
            else set()
        )
        if cases.is_valid(panel_form, formset, not_utf8):
            try:
                saving.store(panel_form, formset, panel)
            except InvalidInput as exc:
                panel_form.add_error("name", exc.errors["name"])
            else:
                messages.success(request, f"Saved the panel {panel_form.cleaned_data['name']}.")
                return redirect("panel-list")
        status = 400
    else:
        initial = {
            "name": panel.name,
            "description": panel.description,
            "hold_contested": cases.hold_choice(panel.hold_contested),
        }
        panel_form = saving.PanelForm(initial=initial, owner=panel.owner, panel=panel)
        formset = saving.agents_formset(agents=saved_panels.agents_of(panel))
        status = 200
    context = {
        "panel": panel,
        "panel_form": panel_form,
        "formset": formset,
        "error_summary": cases.error_summary(panel_form, formset=formset) if status == 400 else [],
    }
    return render(request, "judgements/panel_edit.html", context, status=status)
