"""Saved panels, their certificates, suites and evaluation runs in the admin."""

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse

from judgements.admin.base import (
    AuditAdmin,
    AuditedDeletion,
    ReadOnlyInline,
    TeamScoped,
    staff_user,
)
from judgements.configuration import teams
from judgements.evaluations.charts import percent
from judgements.models import (
    AuditSubject,
    Certificate,
    EvaluationRun,
    Panel,
    Suite,
    SuiteCase,
)


class PanelForm(forms.ModelForm[Panel]):
    """Who shares a panel and who reviews its judgements; checked and audited as
    `manage.py team reviewers` is (judgements/configuration/teams.py)."""

    class Meta:
        model = Panel
        fields = ["team", "reviewers", "team_reviews", "four_eyes", "notify_contested"]

    # What the audit says the panel's reviewing was before this form's changes (set by
    # PanelAdmin.save_model, recorded by its save_related).
    reviewing_before: object

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        reviewers = list(cleaned.get("reviewers") or [])
        errors = teams.reviewing_errors(
            cleaned.get("team"), reviewers, bool(cleaned.get("team_reviews"))
        )
        for field, messages in errors.items():
            for message in messages:
                self.add_error(field, message)
        return cleaned


@admin.register(Panel)
class PanelAdmin(AuditedDeletion[Panel], TeamScoped[Panel]):
    scope = ("owner", "team")
    examples = True
    """Saved panels are made and edited on the site (/panels/), which validates their
    agents as a judgement's; here they are listed, given to a team, given reviewers and
    deleted."""

    form = PanelForm
    list_display = ["name", "owner", "team", "updated_at"]
    search_fields = ["name", "description"]
    filter_horizontal = ["reviewers"]
    fields = [
        "name",
        "description",
        "owner",
        "team",
        "reviewers",
        "team_reviews",
        "four_eyes",
        "notify_contested",
        "agents",
        "hold_contested",
        "run_checks",
        "certificates_link",
        "created_at",
        "updated_at",
    ]
    readonly_fields = [
        "name",
        "description",
        "owner",
        "agents",
        "hold_contested",
        "run_checks",
        "certificates_link",
        "created_at",
        "updated_at",
    ]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: Panel, form: PanelForm, change: bool) -> None:
        # What the audit says it was, read before the form's changes are saved and kept
        # on the form (one per request; the admin itself serves every request).
        form.reviewing_before = teams.reviewers_state(Panel.objects.get(pk=obj.pk))
        super().save_model(request, obj, form, change)

    # formsets: Any as Django's own signature has it (the admin's inline formsets).
    def save_related(
        self, request: HttpRequest, form: PanelForm, formsets: Any, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        panel = form.instance
        teams.record(
            AuditSubject.REVIEWERS,
            teams.panel_target(panel),
            staff_user(request),
            form.reviewing_before,
            teams.reviewers_state(panel),
        )

    @admin.display(description="certificates")
    def certificates_link(self, obj: Panel) -> str:
        """The panel's certificates, voided ones too, in the certificate list."""
        count = obj.certificates.count()
        url = reverse("admin:judgements_certificate_changelist") + f"?panel__id__exact={obj.pk}"
        text = f"{count} certificate{'' if count == 1 else 's'}"
        return render_to_string("admin/judgements/_link.html", {"url": url, "text": text})


@admin.register(Certificate)
class CertificateAdmin(TeamScoped[Certificate], AuditAdmin[Certificate]):
    scope = ("panel__owner", "panel__team")
    examples = True
    """A panel's certificates as measured (judgements/evaluations/certify.py): made from the
    panel's page or `manage.py evaluate --certify`, voided when its agents change; never
    edited here."""

    list_display = [
        "panel",
        "certified",
        "bound_display",
        "coverage_display",
        "created_at",
        "voided_at",
    ]
    list_filter = ["certified", ("voided_at", admin.EmptyFieldListFilter)]
    list_select_related = ["panel"]
    search_fields = ["panel__name"]
    ordering = ["-created_at", "-id"]
    fields = (
        "panel",
        "words",
        "certified",
        "target",
        "delta",
        "samples",
        "rule",
        "bound",
        "accuracy",
        "coverage",
        "kept",
        "best",
        "runs",
        "suites",
        "agents",
        "fingerprint",
        "curve",
        "created_at",
        "created_by",
        "voided_at",
        "void_reason",
    )
    readonly_fields = fields

    @admin.display(description="in words")
    def words(self, obj: Certificate) -> str:
        return obj.describe()

    @admin.display(description="bound", ordering="bound")
    def bound_display(self, obj: Certificate) -> str:
        return percent(obj.bound)

    @admin.display(description="coverage", ordering="coverage")
    def coverage_display(self, obj: Certificate) -> str:
        return percent(obj.coverage)


class SuiteCaseInline(ReadOnlyInline[SuiteCase, Suite]):
    model = SuiteCase
    fields = ("position", "case_id", "title", "expected", "expected_agents", "tags")
    readonly_fields = fields


@admin.register(Suite)
class SuiteAdmin(AuditedDeletion[Suite], TeamScoped[Suite]):
    scope = ("owner", "team")
    examples = True
    """Suites are imported as JSONL (site, API, `manage.py suite`) and given to a team
    with `manage.py team assign` or the API, each audited (configuration/suite_config.py);
    read-only here, but for an audited delete."""

    list_display = ["name", "owner", "created_at"]
    search_fields = ["name", "description"]
    readonly_fields = ["name", "description", "owner", "created_at"]
    inlines = [SuiteCaseInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(EvaluationRun)
class EvaluationRunAdmin(TeamScoped[EvaluationRun], AuditAdmin[EvaluationRun]):
    scope = ("creator", "team")
    """Runs and the panel they ran with; the report is on the run's page."""

    list_display = ["__str__", "panel_name", "suite", "repeats", "creator", "created_at"]
    list_filter = ["suite"]
    readonly_fields = ["panel", "panel_name", "agents", "suite", "repeats", "creator"]
