"""Teams, their members and the audit of who changed a team or a panel's reviewers.

Members are changed through judgements/configuration/teams.py, as `manage.py team` changes
them, so every change is audited; the audit itself is read-only."""

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from judgements.admin.base import AuditAdmin, AuditedDeletion, staff_user
from judgements.configuration import budget_config, people, team_config, teams
from judgements.configuration.budget_config import BudgetForm
from judgements.models import AuditEntry, AuditSubject, Budget, Team, team_ids_of
from judgements.spending import budgets


class TeamForm(forms.ModelForm[Team]):
    # Not "members": the admin would save a field named as the model's own many-to-many
    # itself, past judgements/configuration/teams.py and its audit.
    people = forms.ModelMultipleChoiceField(
        label="Members",
        queryset=get_user_model().objects.order_by("username"),
        required=False,
        widget=FilteredSelectMultiple("members", is_stacked=False),
    )

    class Meta:
        model = Team
        fields = ["name"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.fields["people"].initial = list(self.instance.members.all())


@admin.register(Team)
class TeamAdmin(AuditedDeletion[Team], admin.ModelAdmin[Team]):
    form = TeamForm
    list_display = ["name", "member_list", "all_panel_reviewer_list", "created_at"]
    search_fields = ["name", "members__username"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Team]:
        """Anyone but a superuser sees the teams they are in."""
        found = super().get_queryset(request)
        if request.user.is_superuser:
            return found
        return found.filter(pk__in=team_ids_of(staff_user(request)))

    @admin.display(description="members")
    def member_list(self, obj: Team) -> str:
        return ", ".join(teams.member_names(obj)) or "-"

    @admin.display(description="reviews every panel")
    def all_panel_reviewer_list(self, obj: Team) -> str:
        """The identity provider's reviewers of the team (Membership.reviews_all)."""
        return ", ".join(teams.all_panel_reviewers(obj)) or "-"

    def save_model(self, request: HttpRequest, obj: Team, form: TeamForm, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        # A new team is made the one way every team is (judgements/configuration/team_config.py),
        # audited with its author; its members follow in save_related.
        made = team_config.create(staff_user(request), {"name": obj.name})
        obj.pk = made.pk
        obj.refresh_from_db()

    def save_related(
        self, request: HttpRequest, form: TeamForm, formsets: Any, change: bool
    ) -> None:
        super().save_related(request, form, formsets, change)
        # Through judgements/configuration/teams.py, so the change is audited with its author.
        teams.set_members(form.instance, list(form.cleaned_data["people"]), staff_user(request))


@admin.register(AuditEntry)
class AuditEntryAdmin(AuditAdmin[AuditEntry]):
    list_display = ["at", "subject", "target", "by", "actor"]
    list_filter = ["subject"]
    search_fields = ["target", "by__username"]
    fields = ("at", "subject", "target", "by", "actor", "before", "after")
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[AuditEntry]:
        """Anyone but a superuser reads the changes they made."""
        found = super().get_queryset(request)
        return found if request.user.is_superuser else found.filter(by=request.user.pk)


@admin.register(Budget)
class BudgetAdmin(AuditedDeletion[Budget], admin.ModelAdmin[Budget]):
    """Spending limits (judgements/spending/budgets.py); every change is audited."""

    form = BudgetForm
    list_display = ["__str__", "spent", "resets_at"]

    @admin.display(description="spent this period")
    def spent(self, obj: Budget) -> str:
        state = budgets.state_of(obj)
        usd = "" if state.spent.usd is None else f", {state.spent.usd:.4f} USD"
        return f"{state.spent.tokens:,} tokens{usd}"

    @admin.display(description="resets at")
    def resets_at(self, obj: Budget) -> str:
        return f"{budgets.state_of(obj).resets_at:%Y-%m-%d %H:%M} UTC"

    def save_model(self, request: HttpRequest, obj: Budget, form: BudgetForm, change: bool) -> None:
        stored = Budget.objects.filter(pk=obj.pk).first() if change else None
        before = None if stored is None else budget_config.audit_state(stored)
        super().save_model(request, obj, form, change)
        budget_config.record_change(obj, before, staff_user(request))


# Django's own user admin, its deletions audited with the budgets and tokens they take.
admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class UserAdmin(AuditedDeletion[User], DjangoUserAdmin[User]):
    def save_model(self, request: HttpRequest, obj: User, form: object, change: bool) -> None:
        # Audited as people.py audits a user, so `audit verify` finds a username, email
        # or staff role changed here in the log (configuration/live_state.py).
        stored = User.objects.filter(pk=obj.pk).first() if change else None
        before = None if stored is None else people.state(stored)
        super().save_model(request, obj, form, change)
        teams.record(
            AuditSubject.USER,
            people.user_target(obj.pk),
            staff_user(request),
            before,
            people.state(obj),
        )

    def save_related(
        self,
        request: HttpRequest,
        form: forms.ModelForm[User],
        formsets: list[object],
        change: bool,
    ) -> None:
        # Groups and permissions are saved here, after save_model's row: one more row.
        with people.changes_audited([form.instance.pk], staff_user(request)):
            super().save_related(request, form, formsets, change)

    def user_change_password(
        self, request: HttpRequest, id: str, form_url: str = ""
    ) -> HttpResponse:
        """Another user's password set here: its new hash audited (its SHA-256)."""
        with transaction.atomic(), people.changes_audited([id], staff_user(request)):
            return super().user_change_password(request, id, form_url)
