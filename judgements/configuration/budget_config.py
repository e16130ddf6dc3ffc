"""Spending limits made, changed and removed: one form (BudgetForm) validates the admin's
budget page and the API's /api/budgets/, every change is audited with who made it
(`record_change`), and the API's are versioned for If-Match.

Only staff change budgets, as only staff reach the admin's budget page: a team does not
raise its own spending cap. Anyone reads the budgets `visible_to` shows them; what a
budget has spent and has left is spending/budgets.py's.
"""

from typing import Any, TypedDict

from django import forms
from django.contrib.auth.models import User
from django.core.exceptions import NON_FIELD_ERRORS
from django.db import transaction
from django.db.models import QuerySet

from judgements.audit import record as chain_record
from judgements.configuration import names, versions
from judgements.core import etags, text
from judgements.core.errors import Forbidden, InvalidInput, NotFound
from judgements.models import AuditEntry, AuditSubject, Budget, Panel, Team, is_id, policy
from judgements.panels import saved_panels


class BudgetFields(TypedDict):
    """A budget as the API writes it (api/config_schemas.py BudgetWrite): whose, by name,
    its period and its one limit."""

    team: str | None
    user: str | None
    panel: str | int | None
    panel_team: str | None
    period: str
    limit_usd: float | None
    limit_tokens: int | None


# A budget as the audit records it, before and after a change.
BudgetState = TypedDict(
    "BudgetState",
    {"id": int, "for": str, "period": str, "limit_usd": str | None, "limit_tokens": int | None},
)


class ScopeData(TypedDict):
    """BudgetForm's scope fields as posted: each the id of what `body` named, or blank."""

    team: int | str
    user: int | str
    panel: int | str


class FormData(ScopeData):
    """BudgetForm's fields as posted (`bound`): its period and limits as text (a blank
    limit: none), its scope's ids."""

    period: str
    limit_usd: str
    limit_tokens: str


SCOPES = ("team", "user", "panel")
LIMITS = ("limit_usd", "limit_tokens")
ONE_SCOPE = "Name exactly one of a team, a user or a panel."
ONE_LIMIT = "Give exactly one limit: in USD or in tokens."
STAFF_ONLY = "Only staff change budgets."


class BudgetForm(forms.ModelForm[Budget]):
    """A budget as the admin's page and the API validate it: one scope, one limit."""

    class Meta:
        model = Budget
        fields = ["team", "user", "panel", "period", "limit_usd", "limit_tokens"]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        # A field already refused says what is wrong with it; no count of what is left.
        for names_, message, code in ((SCOPES, ONE_SCOPE, "scope"), (LIMITS, ONE_LIMIT, "limit")):
            refused = any(name in self.errors for name in names_)
            if not refused and len([n for n in names_ if cleaned.get(n) is not None]) != 1:
                self.add_error(None, forms.ValidationError(message, code=code))
        return cleaned


def form_errors(form: BudgetForm) -> dict[str, list[str]]:
    """The form's errors by field; its own (one scope, one limit) under `scope`, `limit`."""
    errors: dict[str, list[str]] = {}
    for field, found in form.errors.as_data().items():
        for error in found:
            if field != NON_FIELD_ERRORS:
                errors.setdefault(field, []).extend(error.messages)
            elif error.code in ("scope", "limit"):
                errors.setdefault(error.code, []).extend(error.messages)
            # else the database's constraints, which say the same as clean() in its words
    return errors


def visible_budget(budget_id: int, by: User) -> Budget:
    budget = visible_to(by).filter(pk=budget_id).first() if is_id(budget_id) else None
    if budget is None:
        raise NotFound(f"No budget {budget_id}.")
    return budget


def create(by: User, body: BudgetFields) -> Budget:
    """A new budget as `body` says (staff only); InvalidInput names each field at fault."""
    if not by.is_staff:
        raise Forbidden(STAFF_ONLY)
    with transaction.atomic():
        budget = bound(by, body, None).save()
        budget.refresh_from_db()  # its limit as stored (5.0000), as every read answers it
        record_change(budget, None, by)
        return budget


def replace(by: User, budget_id: int, body: BudgetFields, if_match: str) -> Budget:
    """The budget made exactly as `body` says, if it is still as the caller read it."""
    with transaction.atomic():
        budget = visible_budget(budget_id, by)
        if not by.is_staff:
            raise Forbidden(STAFF_ONLY)
        etags.check(if_match, "budget", budget.etag())
        before = audit_state(budget)
        form = bound(by, body, budget)
        fields = {name: form.cleaned_data[name] for name in form.Meta.fields}
        versions.bump(Budget.objects, budget.pk, budget.version, "budget", **fields)
        budget.refresh_from_db()
        record_change(budget, before, by)
        return budget


def delete(by: User, budget_id: int, if_match: str) -> None:
    with transaction.atomic():
        budget = visible_budget(budget_id, by)
        if not by.is_staff:
            raise Forbidden(STAFF_ONLY)
        etags.check(if_match, "budget", budget.etag())
        before = audit_state(budget)
        if not Budget.objects.filter(pk=budget.pk, version=budget.version).delete()[0]:
            raise etags.Stale("budget", None)
        record_change(None, before, by)


def bound(by: User, body: BudgetFields, budget: Budget | None) -> BudgetForm:
    """BudgetForm bound to what `body` names by name (a team, a username, a panel's id or
    name), valid, or InvalidInput with every field at fault."""
    errors: dict[str, list[str]] = {}
    data: FormData = {
        "period": body["period"],
        "limit_usd": posted(body["limit_usd"]),
        "limit_tokens": posted(body["limit_tokens"]),
        **scope_data(by, body, errors),
    }
    form = BudgetForm(data, instance=budget)
    if not form.is_valid() or errors:
        found = form_errors(form)
        if any(scope in errors for scope in SCOPES):
            found.pop("scope", None)  # the name it could not find says it
        raise InvalidInput(errors | found)
    return form


def posted(limit: float | None) -> str:
    """A limit as the form's field is posted: blank for none."""
    return "" if limit is None else str(limit)


def scope_data(by: User, body: BudgetFields, errors: dict[str, list[str]]) -> ScopeData:
    """The form's team, user and panel fields (their ids) from the names in `body`."""
    data: ScopeData = {"team": "", "user": "", "panel": ""}
    if (team_name := body["team"]) is not None:
        team: Team | None = names.team_named(team_name, by)
        if team is None:
            errors["team"] = [names.no_team(team_name, by)]
        data["team"] = team.pk if team else ""
    if (username := body["user"]) is not None:
        users, unknown = names.users_named([username])
        if unknown:
            errors["user"] = [names.no_users(unknown)]
        data["user"] = users[0].pk if users else ""
    if (panel := body["panel"]) is not None:
        try:
            data["panel"] = panel_of(by, panel, body["panel_team"]).pk
        except InvalidInput as exc:
            errors |= exc.errors
    elif body["panel_team"] is not None:
        errors["panel_team"] = ["Only with a panel: the team whose panel it is."]
    return data


def panel_of(by: User, reference: str | int, team_name: str | None) -> Panel:
    """The panel a budget names: by id or name among those `by` may use, or, with
    `team_name`, by name among that team's panels (two teams may share a name)."""
    if team_name is None:
        return saved_panels.resolve(reference, by)
    team = names.team_named(team_name, by)
    if team is None:
        raise InvalidInput({"panel_team": [names.no_team(team_name, by)]})
    in_team = Panel.objects.filter(team=team).only("id", "name")
    if isinstance(reference, int):
        found = in_team.filter(pk=reference).first()
    else:
        key = text.comparable_name(reference)
        found = next((p for p in in_team if text.comparable_name(p.name) == key), None)
    if found is None:
        shown = reference if isinstance(reference, int) else repr(text.escaped(reference))
        raise InvalidInput({"panel": [f"The team {team.name} has no panel {shown}."]})
    return found


# --- who reads a budget, and the audit of its changes ------------------------------


def visible_to(user: User) -> QuerySet[Budget]:
    """The budgets a user may read: staff all; anyone else their own, their teams' and
    those of the panels they may use."""
    found = Budget.objects.select_related("team", "user", "panel")
    return policy.budgets_visible(found, user, Panel.objects.all())


def record_change(budget: Budget | None, before: BudgetState | None, by: User | None) -> None:
    """An audit entry for a budget made, changed or removed (models/teams.AuditEntry)."""
    after = None if budget is None else audit_state(budget)
    target = f"budget {budget.pk}" if budget is not None else f"budget {before and before['id']}"
    if before != after:
        with transaction.atomic():
            entry = AuditEntry.objects.create(
                subject=AuditSubject.BUDGET, target=target, by=by, before=before, after=after
            )
            chain_record.configuration(entry)


def audit_state(budget: Budget) -> BudgetState:
    return {
        "id": budget.pk,
        "for": budget.scope_words(),
        "period": budget.period,
        "limit_usd": None if budget.limit_usd is None else str(budget.limit_usd),
        "limit_tokens": budget.limit_tokens,
    }
