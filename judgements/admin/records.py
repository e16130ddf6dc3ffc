"""The audit's other records: every LLM attempt as sent, reviews, API tokens, webhook
deliveries and the audit log."""

from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.urls import reverse

from judgements.admin.base import AuditAdmin, AuditedDeletion, ReadOnlyInline, TeamScoped
from judgements.models import (
    ApiToken,
    ChainEntry,
    Confirmation,
    LLMAttempt,
    Override,
    RoundDecision,
    WebhookAttempt,
    WebhookDelivery,
)


@admin.register(LLMAttempt)
class LLMAttemptAdmin(TeamScoped[LLMAttempt], AuditAdmin[LLMAttempt]):
    scope = ("agent__judgement__creator", "agent__judgement__team")
    """Each call as it was sent and answered, retries and failures included."""

    list_display = [
        "agent_name",
        "judgement_link",
        "round",
        "attempt",
        "outcome",
        "duration_ms",
        "started",
    ]
    list_display_links = ["agent_name"]
    list_filter = ["outcome", "model", ("started_at", admin.DateFieldListFilter)]
    list_select_related = ["agent__judgement"]
    search_fields = ["agent__judgement__title", "response_text", "error"]
    ordering = ["-started_at", "-id"]
    fields = (
        "judgement_link",
        "agent",
        "round",
        "attempt",
        "outcome",
        "provider",
        "model",
        "base_url",
        "duration_ms",
        "prompt_tokens",
        "cached_tokens",
        "completion_tokens",
        "started_at",
        "chat",
    )
    readonly_fields = fields

    # Short columns, so the list fits beside its filters at 1280 px (the model is a filter).
    @admin.display(description="started", ordering="started_at")
    def started(self, obj: LLMAttempt) -> str:
        return f"{obj.started_at:%Y-%m-%d %H:%M:%S}"

    @admin.display(description="agent", ordering="agent__name")
    def agent_name(self, obj: LLMAttempt) -> str:
        return obj.agent.name

    @admin.display(description="judgement")
    def judgement_link(self, obj: LLMAttempt) -> str:
        judgement = obj.agent.judgement
        url = reverse("admin:judgements_judgement_change", args=[judgement.pk])
        return render_to_string(
            "admin/judgements/_link.html", {"url": url, "text": judgement.title}
        )

    @admin.display(description="the request as a chat, and the reply or error")
    def chat(self, obj: LLMAttempt) -> str:
        return render_to_string("admin/judgements/_attempt_chat.html", {"attempt": obj})


@admin.register(Override)
class OverrideAdmin(TeamScoped[Override], AuditAdmin[Override]):
    scope = ("judgement__creator", "judgement__team")
    """The override audit: who set which panel verdict aside, when, and why."""

    list_display = ["judgement", "panel_status", "decision", "by", "at"]
    list_filter = ["decision", "panel_status"]
    search_fields = ["judgement__title", "reason", "by__username"]
    readonly_fields = ["judgement", "panel_status", "decision", "by", "at", "reason"]


@admin.register(Confirmation)
class ConfirmationAdmin(TeamScoped[Confirmation], AuditAdmin[Confirmation]):
    scope = ("judgement__creator", "judgement__team")
    """The confirmation audit: who looked at a contested verdict and kept it, and why."""

    list_display = ["judgement", "panel_status", "by", "at"]
    list_filter = ["panel_status"]
    search_fields = ["judgement__title", "reason", "by__username"]
    readonly_fields = ["judgement", "panel_status", "by", "at", "reason"]


@admin.register(RoundDecision)
class RoundDecisionAdmin(TeamScoped[RoundDecision], AuditAdmin[RoundDecision]):
    scope = ("agent__judgement__creator", "agent__judgement__team")
    list_display = ["agent", "round", "decision", "p_approve", "latency_ms", "created_at"]
    list_filter = ["decision", "round"]
    search_fields = ["agent__name", "agent__judgement__title", "reason"]


@admin.register(ApiToken)
class ApiTokenAdmin(AuditedDeletion[ApiToken], TeamScoped[ApiToken]):
    scope = ("user", "team")
    """Tokens are issued with `manage.py api_token`; here they can be seen and revoked."""

    list_display = ["name", "user", "prefix", "created_at", "last_used_at"]
    readonly_fields = ["name", "user", "prefix", "key_hash", "created_at", "last_used_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class WebhookAttemptInline(ReadOnlyInline[WebhookAttempt, WebhookDelivery]):
    model = WebhookAttempt
    fields = ("number", "started_at", "status_code", "duration_ms", "error", "worker")
    readonly_fields = fields


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(TeamScoped[WebhookDelivery], AuditAdmin[WebhookDelivery]):
    scope = ("judgement__creator", "judgement__team")
    """Every webhook and each of its attempts (status, duration, error), read-only."""

    list_display = ["__str__", "event", "status", "attempt_count", "created_at", "finished_at"]
    list_filter = ["status", "event"]
    search_fields = ["judgement__title", "url"]
    readonly_fields = [
        "judgement",
        "event",
        "url",
        "status",
        "attempt_count",
        "next_attempt_at",
        "lease_owner",
        "lease_expires_at",
        "created_at",
        "finished_at",
        "payload",
    ]
    inlines = [WebhookAttemptInline]


@admin.register(ChainEntry)
class ChainEntryAdmin(AuditAdmin[ChainEntry]):
    """The audit log (docs/evidence.md), read-only; for superusers alone, as it names
    every team's judgements. `manage.py audit verify` checks it."""

    list_display = ["seq", "kind", "subject", "at"]
    list_filter = ["kind"]
    search_fields = ["subject"]
    fields = ("seq", "kind", "subject", "judgement", "at", "payload", "leaf_hash", "prev_sha256")
    readonly_fields = fields

    def has_view_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return bool(request.user.is_active and request.user.is_superuser)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return self.has_view_permission(request)
