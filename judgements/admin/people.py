"""What Django's admin changes of a user beyond its own form, audited: a group's name and
permissions (its members' own: configuration/people.py's state holds them), a group
deleted, and a staff member's own password changed (`admin/password_change/`, routed
here by magi_site/urls.py). The user form, and another user's password, are audited by
admin/teams.py's UserAdmin. Each change writes its members' audit rows, so `manage.py
audit verify` finds the same in the log and names only what changed behind MAGI's back."""

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin as DjangoGroupAdmin
from django.contrib.auth.models import Group, User
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse

from judgements.admin.base import staff_user
from judgements.configuration import people


def members(groups: QuerySet[Group]) -> list[int]:
    return list(User.objects.filter(groups__in=groups).values_list("pk", flat=True).distinct())


def members_of(group_id: str | None) -> list[int]:
    """The members of the group the admin's URL names (none for a new group)."""
    if group_id is None or not group_id.isdecimal():
        return []
    return members(Group.objects.filter(pk=int(group_id)))


admin.site.unregister(Group)


@admin.register(Group)
class GroupAdmin(DjangoGroupAdmin):
    """Django's group admin; what a group holds is its members', audited on each."""

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, object] | None = None,
    ) -> HttpResponse:
        with (
            transaction.atomic(),
            people.changes_audited(members_of(object_id), staff_user(request)),
        ):
            return super().changeform_view(request, object_id, form_url, extra_context)

    def delete_model(self, request: HttpRequest, obj: Group) -> None:
        with (
            transaction.atomic(),
            people.changes_audited(members_of(str(obj.pk)), staff_user(request)),
        ):
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Group]) -> None:
        with transaction.atomic(), people.changes_audited(members(queryset), staff_user(request)):
            super().delete_queryset(request, queryset)


def change_own_password(request: HttpRequest) -> HttpResponse:
    """The admin's own password change page, audited as made by the one who changed it."""
    user = staff_user(request)
    with transaction.atomic(), people.changes_audited([user.pk], user):
        return admin.site.password_change(request)


# The admin's guard first: only a signed-in staff member reaches the page.
password_change = admin.site.admin_view(change_own_password)
