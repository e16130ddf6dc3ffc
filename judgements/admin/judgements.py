"""The judgements in the admin: the audit history, newest first, with each judgement's
agents, round decisions and LLM attempts."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet, Sum
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse

from judgements.admin.base import AuditAdmin, ReadOnlyInline, TeamScoped, staff_user
from judgements.core.confidence import probability_words
from judgements.models import (
    Agent,
    Judgement,
    JudgementCheck,
    LLMAttempt,
    RoundDecision,
    Status,
    Trust,
)
from judgements.outcome import overrides
from judgements.outcome.answers import trust_words

# The list's trust column, short enough to fit at 1280 px.
SHORT_TRUST: dict[str | None, str] = {
    Trust.CONTESTED: "contested",
    Trust.NOT_CONTESTED: "not contested",
    Trust.UNMEASURED: "not measured",
}


class AgentInline(ReadOnlyInline[Agent, Judgement]):
    model = Agent
    fields = ("position", "name", "model", "criteria", "final_score", "final_decision")
    readonly_fields = fields


class DecisionFilter(admin.SimpleListFilter):
    title = "decision"
    parameter_name = "decision"

    def lookups(
        self, request: HttpRequest, model_admin: "admin.ModelAdmin[Judgement]"
    ) -> list[tuple[str, str]]:
        return [("approve", "Approved"), ("reject", "Rejected"), ("none", "No decision")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Judgement]) -> QuerySet[Judgement]:
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

    def lookups(
        self, request: HttpRequest, model_admin: "admin.ModelAdmin[Judgement]"
    ) -> list[tuple[str, str]]:
        models = Agent.objects.order_by("model").values_list("model", flat=True).distinct()
        return [(m, m) for m in models]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Judgement]) -> QuerySet[Judgement]:
        if self.value():
            return queryset.filter(agents__model=self.value()).distinct()
        return queryset


@admin.register(Judgement)
class JudgementAdmin(TeamScoped[Judgement], AuditAdmin[Judgement]):
    scope = ("creator", "team")
    # Short columns only, so all fit at 1280 px: the agents and models are on the change
    # page and in the model filter.
    list_display = [
        "title",
        "verdict_display",
        "trust_display",
        "creator",
        "created",
        "duration_display",
    ]
    list_filter = [
        "status",
        DecisionFilter,
        "trust",
        "contested",
        "hold_contested",
        ("created_at", admin.DateFieldListFilter),
        ModelFilter,
    ]
    search_fields = ["title", "content", "agents__name"]
    date_hierarchy = "created_at"
    ordering = ["-created_at", "-id"]
    readonly_fields = [
        "title",
        "content",
        "status",
        # Its escalation story (docs/escalation.md): its level, the level it continues,
        # the story's first, and whether the next level's verdict is in force instead.
        "level",
        "escalated",
        "escalated_from",
        "root",
        "trust",
        "trust_words_display",
        "certificate",
        "confidence_display",
        "contested",
        "contest_reasons_display",
        "contest_signals",
        "hold_contested",
        "hold_unmeasured",
        "checks_asked",
        "confirmation_display",
        "override_display",
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
        "judgement_checks",
    ]
    # Every field in reading order (unlisted model fields would come first, and the raw
    # contest_reasons beside "why contested").
    fields = [
        *readonly_fields[: readonly_fields.index("created_at")],
        "panel",
        "evaluation_run",
        "suite_case",
        "repeat",
        "api_token",
        "callback_url",
        "hidden_at",
        *readonly_fields[readonly_fields.index("created_at") :],
    ]
    inlines = [AgentInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Judgement]:
        return (
            super()
            .get_queryset(request)
            .select_related("override__by", "certificate__panel")
            .prefetch_related("agents")
        )

    def get_urls(self) -> list[URLPattern]:
        override = self.admin_site.admin_view(self.override_view)
        return [
            path("<int:judgement_id>/override/", override, name="judgements_judgement_override"),
            *super().get_urls(),
        ]

    def override_view(self, request: HttpRequest, judgement_id: int) -> HttpResponse:
        """Put a human's verdict in force over the panel's (judgements/outcome/overrides.py)."""
        judgement = get_object_or_404(Judgement, pk=judgement_id)
        if not overrides.may_override(request.user, judgement):
            raise PermissionDenied
        change_url = reverse("admin:judgements_judgement_change", args=[judgement.pk])
        form = overrides.OverrideForm(request.POST or None, verdict=judgement.verdict)
        refusal = ""
        if request.method == "POST" and form.is_valid():
            refusal = overrides.apply_form(judgement.pk, staff_user(request), form) or ""
            if not refusal and form.is_valid():
                messages.success(request, "The override is in force.")
                return HttpResponseRedirect(change_url)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Override: {judgement.title}",
            "judgement": judgement,
            "form": form,
            "refusal": refusal,
            "change_url": change_url,
            "opts": self.model._meta,
        }
        status = 200 if request.method == "GET" else (409 if refusal else 400)
        return TemplateResponse(request, "admin/judgements/override.html", context, status=status)

    @admin.display(description="verdict")
    def verdict_display(self, obj: Judgement) -> str:
        """The verdict in force; for a level that escalated, its own decision and that it
        escalated, beside the story's verdict (docs/escalation.md)."""
        if obj.escalated:
            return (
                f"{obj.get_status_display()}, escalated to level {obj.level + 1} "
                f"(the story's verdict: {obj.get_verdict_display()})"
            )
        override = obj.override_or_none
        if override is None:
            return obj.get_verdict_display()
        return f"{obj.get_verdict_display()} (overridden by {override.by.get_username()})"

    @admin.display(description="override")
    def override_display(self, obj: Judgement) -> str:
        return render_to_string(
            "admin/judgements/override_field.html",
            {
                "judgement": obj,
                "override": obj.override_or_none,
                "url": reverse("admin:judgements_judgement_override", args=[obj.pk]),
            },
        )

    @admin.display(description="trust", ordering="trust")
    def trust_display(self, obj: Judgement) -> str:
        """Short, so the list fits at 1280 px: the full words are on the change page. A
        level that escalated needs no person: the next level judged it."""
        if obj.escalated:
            return "escalated"
        return SHORT_TRUST.get(obj.trust, "—")

    @admin.display(description="trust in words")
    def trust_words_display(self, obj: Judgement) -> str:
        return trust_words(obj) or "—"

    @admin.display(description="confidence of the verdict")
    def confidence_display(self, obj: Judgement) -> str:
        return (
            f"from the answers {probability_words(obj.answer_confidence)}; "
            f"from the probes {probability_words(obj.probe_confidence)}"
        )

    @admin.display(description="checks beside the vote (as sent and as answered)")
    def judgement_checks(self, obj: Judgement) -> str:
        checks = JudgementCheck.objects.filter(judgement=obj).select_related("agent")
        rows = [(check, check_finding(check)) for check in checks]
        return render_to_string("admin/judgements/judgement_checks.html", {"rows": rows})

    @admin.display(description="why contested")
    def contest_reasons_display(self, obj: Judgement) -> str:
        return " ".join(obj.contest_reasons) or "—"

    @admin.display(description="confirmation")
    def confirmation_display(self, obj: Judgement) -> str:
        confirmation = obj.confirmation_or_none
        if confirmation is None:
            return "—"
        return (
            f"{confirmation.get_decision_display()} kept by {confirmation.by.get_username()} "
            f"on {confirmation.at:%Y-%m-%d %H:%M}: {confirmation.reason}"
        )

    @admin.display(description="round decisions")
    def round_decisions(self, obj: Judgement) -> str:
        decisions = RoundDecision.objects.filter(agent__judgement=obj).select_related("agent")
        changes = obj.vote_changes()
        rows = [(d, changes[d.agent_id, d.round]) for d in decisions]
        return render_to_string("admin/judgements/round_decisions.html", {"rows": rows})

    @admin.display(description="LLM attempts (as sent and as answered)")
    def llm_attempts(self, obj: Judgement) -> str:
        attempts = LLMAttempt.objects.filter(agent__judgement=obj).select_related("agent")
        return render_to_string("admin/judgements/llm_attempts.html", {"attempts": attempts})

    @admin.display(description="tokens (all attempts)")
    def tokens(self, obj: Judgement) -> str:
        totals = token_totals(obj)
        if totals["prompt"] is None:
            return "—"
        cached = totals["cached"]
        share = f" ({100 * cached / totals['prompt']:.0f} %)" if cached and totals["prompt"] else ""
        return (
            f"prompt {totals['prompt']}, of which cached {cached if cached is not None else '—'}"
            f"{share}; completion {totals['completion']}"
        )

    @admin.display(description="created", ordering="created_at")
    def created(self, obj: Judgement) -> str:
        return f"{obj.created_at:%Y-%m-%d %H:%M}"

    @admin.display(description="duration")
    def duration_display(self, obj: Judgement) -> str:
        return f"{obj.duration.total_seconds():.1f} s" if obj.duration else "—"


def token_totals(judgement: Judgement) -> dict[str, int | None]:
    """Prompt, cached and completion tokens over every attempt, the checks beside the vote
    included (None: never reported)."""
    sums = {
        "prompt": Sum("prompt_tokens"),
        "cached": Sum("cached_tokens"),
        "completion": Sum("completion_tokens"),
    }
    votes = LLMAttempt.objects.filter(agent__judgement=judgement).aggregate(**sums)
    checks = JudgementCheck.objects.filter(judgement=judgement).aggregate(**sums)
    return {
        kind: None
        if votes[kind] is None and checks[kind] is None
        else (votes[kind] or 0) + (checks[kind] or 0)
        for kind in sums
    }


def check_finding(check: JudgementCheck) -> str:
    """What one check found, in words: a failed call found nothing."""
    if check.error:
        return "failed: nothing found"
    found = []
    if check.decision:
        found.append(f"decided {check.get_decision_display()}")
    if check.steered is not None:
        found.append("the content steered the model" if check.steered else "not steered")
    if check.p_approve is not None:
        found.append(f"P(approve) {check.p_approve:.3f}")
    return "; ".join(found) or "nothing known"
