"""What every audit page shares: records shown, never edited or deleted."""

from typing import TypeVar, cast

from django.contrib import admin
from django.contrib.auth.models import User
from django.db.models import Model, Q, QuerySet
from django.http import HttpRequest

from judgements.configuration import deletions
from judgements.models import policy


def staff_user(request: HttpRequest) -> User:
    """The user of an admin request: the admin site lets only a signed-in staff member
    in (AdminSite.admin_view), never AnonymousUser, which HttpRequest.user may also be."""
    return cast(User, request.user)


# The model an admin shows, and the model an inline's rows belong to.
M = TypeVar("M", bound=Model)
P = TypeVar("P", bound=Model)


class ReadOnlyInline(admin.TabularInline[M, P]):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class AuditAdmin(admin.ModelAdmin[M]):
    """Audit records can be viewed (has_view_permission), never added, edited or deleted."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


class TeamScoped(admin.ModelAdmin[M]):
    """For anyone but a superuser, only the rows of what they made and of their teams
    (docs/teams.md): a staff member of one team reads none of another's in the admin.
    `scope` names, from this model, the lookup of the row's maker and of its team;
    `examples` says the rows without either (shipped examples) are everyone's."""

    scope: tuple[str, str]
    examples = False

    def get_queryset(self, request: HttpRequest) -> QuerySet[M]:
        found = super().get_queryset(request)
        user = staff_user(request)
        if user.is_superuser:
            return found
        maker, team = self.scope
        allowed = policy.made_or_shared(user, maker, team)
        if self.examples:
            allowed |= Q(**{f"{maker}__isnull": True, f"{team}__isnull": True})
        return found.filter(allowed)


class AuditedDeletion(admin.ModelAdmin[M]):
    """The admin's delete, one row or "delete selected", audited with what goes with it
    (configuration/deletions.py)."""

    def delete_model(self, request: HttpRequest, obj: M) -> None:
        deletions.delete([obj], staff_user(request))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[M]) -> None:
        deletions.delete(list(queryset), staff_user(request))
