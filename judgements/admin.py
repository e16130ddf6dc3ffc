"""The audit history. Recorded decisions and attempts are read-only here: nobody edits
or deletes what the panel said through the admin."""

from django.contrib import admin
from django.template.loader import render_to_string

from judgements.models import Agent, ApiToken, Judgement, LLMAttempt, RoundDecision, Status


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class AgentInline(ReadOnlyInline):
    model = Agent
    fields = ["position", "name", "model", "criteria", "final_score", "final_decision"]
    readonly_fields = fields


class AuditAdmin(admin.ModelAdmin):
    """Audit records can be viewed (has_view_permission), never added, edited or deleted."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class DecisionFilter(admin.SimpleListFilter):
    title = "decision"
    parameter_name = "decision"

    def lookups(self, request, model_admin):
        return [("approve", "Approved"), ("reject", "Rejected"), ("none", "No decision")]

    def queryset(self, request, queryset):
        match self.value():
            case "approve":
                return queryset.filter(status=Status.APPROVED)
            case "reject":
                return queryset.filter(status=Status.REJECTED)
            case "none":
                return queryset.exclude(status__in=[Status.APPROVED, Status.REJECTED])
        return queryset


class ModelFilter(admin.SimpleListFilter):
    title = "model"
    parameter_name = "model"

    def lookups(self, request, model_admin):
        models = Agent.objects.order_by("model").values_list("model", flat=True).distinct()
        return [(m, m) for m in models]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(agents__model=self.value()).distinct()
        return queryset


@admin.register(Judgement)
class JudgementAdmin(AuditAdmin):
    list_display = [
        "title",
        "status",
        "decision_display",
        "agents_display",
        "creator",
        "created_at",
        "duration_display",
    ]
    list_filter = ["status", DecisionFilter, ("created_at", admin.DateFieldListFilter), ModelFilter]
    search_fields = ["title", "content", "agents__name"]
    date_hierarchy = "created_at"
    ordering = ["-created_at", "-id"]
    readonly_fields = [
        "title",
        "content",
        "status",
        "error_message",
        "error_agent",
        "error_round",
        "creator",
        "created_at",
        "started_at",
        "finished_at",
        "lease_owner",
        "lease_expires_at",
        "tokens",
        "round_decisions",
        "llm_attempts",
    ]
    inlines = [AgentInline]

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("agents")

    @admin.display(description="round decisions")
    def round_decisions(self, obj: Judgement) -> str:
        decisions = RoundDecision.objects.filter(agent__judgement=obj).select_related("agent")
        return render_to_string("admin/judgements/round_decisions.html", {"decisions": decisions})

    @admin.display(description="LLM attempts (as sent and as answered)")
    def llm_attempts(self, obj: Judgement) -> str:
        attempts = LLMAttempt.objects.filter(agent__judgement=obj).select_related("agent")
        return render_to_string("admin/judgements/llm_attempts.html", {"attempts": attempts})

    @admin.display(description="tokens (all attempts)")
    def tokens(self, obj: Judgement) -> str:
        totals = obj.token_totals()
        if totals["prompt"] is None:
            return "—"
        cached = totals["cached"]
        share = f" ({100 * cached / totals['prompt']:.0f} %)" if cached and totals["prompt"] else ""
        return (
            f"prompt {totals['prompt']}, of which cached {cached if cached is not None else '—'}"
            f"{share}; completion {totals['completion']}"
        )

    @admin.display(description="decision")
    def decision_display(self, obj: Judgement) -> str:
        return obj.decision or "—"

    @admin.display(description="agents")
    def agents_display(self, obj: Judgement) -> str:
        return ", ".join(f"{a.name} ({a.model})" for a in obj.agents.all())

    @admin.display(description="duration")
    def duration_display(self, obj: Judgement) -> str:
        return f"{obj.duration.total_seconds():.1f} s" if obj.duration else "—"


@admin.register(RoundDecision)
class RoundDecisionAdmin(AuditAdmin):
    list_display = ["agent", "round", "decision", "latency_ms", "created_at"]
    list_filter = ["decision", "round"]
    search_fields = ["agent__name", "agent__judgement__title", "reason"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are issued with `manage.py api_token`; here they can be seen and revoked."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at"]
    readonly_fields = ["name", "user", "prefix", "key_hash", "created_at", "last_used_at"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
