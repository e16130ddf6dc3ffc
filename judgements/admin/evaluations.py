"""Saved panels, suites and evaluation runs in the admin."""

from django.contrib import admin

from judgements.admin.base import AuditAdmin, ReadOnlyInline
from judgements.models import (
    EvaluationRun,
    Panel,
    Suite,
    SuiteCase,
)


@admin.register(Panel)
class PanelAdmin(admin.ModelAdmin):
    """Saved panels are made and edited on the site (/panels/), which validates their
    agents as a judgement's; here they are listed and can be deleted."""

    list_display = ["name", "owner", "updated_at"]
    search_fields = ["name", "description"]
    readonly_fields = ["name", "description", "owner", "agents", "created_at", "updated_at"]

    def has_add_permission(self, request) -> bool:
        return False


class SuiteCaseInline(ReadOnlyInline):
    model = SuiteCase
    fields = ["position", "case_id", "title", "expected", "expected_agents", "tags"]
    readonly_fields = fields


@admin.register(Suite)
class SuiteAdmin(admin.ModelAdmin):
    """Suites are imported as JSONL (site, API, `manage.py suite`); read-only here."""

    list_display = ["name", "owner", "created_at"]
    search_fields = ["name", "description"]
    readonly_fields = ["name", "description", "owner", "created_at"]
    inlines = [SuiteCaseInline]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(EvaluationRun)
class EvaluationRunAdmin(AuditAdmin):
    """Runs and the panel they ran with; the report is on the run's page."""

    list_display = ["__str__", "panel_name", "suite", "repeats", "creator", "created_at"]
    list_filter = ["suite"]
    readonly_fields = ["panel", "panel_name", "agents", "suite", "repeats", "creator"]
