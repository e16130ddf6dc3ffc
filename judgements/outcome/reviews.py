"""A person's look at a contested verdict: the review queue, and confirming the panel.

A reviewer (staff, the override_judgement permission, or a reviewer its panel names:
overrides.may_override) opens a contested judgement from the queue, reads the panel's
record and either confirms the panel's verdict or overrides it (judgements/outcome/
overrides.py), with a reason either way. A confirmation is a row of its own, audited
like an override (who, when, what the panel had decided, why), one per judgement and
never edited. Either review releases a held verdict (Judgement.verdict) and sends the
judgement's webhook again.
"""

from django import forms as django_forms
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction

from judgements.audit import record as chain_record
from judgements.core.errors import InvalidInput
from judgements.infrastructure import events
from judgements.infrastructure.forms import TextField
from judgements.models import Confirmation, Judgement, Status
from judgements.models.judgements import JudgementQuerySet, waiting_for_review
from judgements.outcome import overrides, webhooks

DECIDED = (Status.APPROVED, Status.REJECTED)


class ConfirmForm(django_forms.Form):
    """The live page's confirm form; the same checks as the API's apply (confirm).
    Prefixed: it shares the page with the override form, whose field is also "reason"."""

    prefix = "confirm"

    reason = TextField(
        max_chars=overrides.REASON_MAX_CHARS,
        strip=False,
        widget=django_forms.Textarea(attrs={"rows": 3}),
        help_text="Why the panel's verdict stands after your look; kept in the audit.",
    )


def apply_form(judgement_id: int, user: User, form: ConfirmForm) -> str | None:
    """Confirm from a valid form. Returns why it was refused, or None; field errors go
    onto the form."""
    try:
        confirm(judgement_id, user, form.cleaned_data["reason"])
    except InvalidInput as exc:
        for message in exc.errors.get("reason", []):
            form.add_error("reason", message)
    except overrides.OverrideConflict as exc:
        return exc.message
    return None


def queue(user: User) -> JudgementQuerySet:
    """Contested or held judgements nobody has reviewed yet that `user` may review
    (Judgement.reviewable_by), newest first, whoever submitted them. An evaluation run's
    judgements are measured by its report, not reviewed one by one."""
    waiting = (
        Judgement.objects.reviewable_by(user)
        .filter(waiting_for_review())
        .filter(evaluation_run__isnull=True)
    )
    return waiting.select_related("creator", "panel").order_by("-finished_at", "-pk")


def confirm(judgement_id: int, user: User, reason: str) -> Confirmation:
    """Keep the panel's verdict, on a person's word; raises InvalidInput for a bad reason and
    overrides.OverrideConflict if the judgement is not decided or already reviewed. The
    caller checks overrides.may_override and visibility."""
    errors = overrides.reason_errors(reason)
    if errors:
        raise InvalidInput({"reason": errors})
    try:
        with transaction.atomic():
            judgement = Judgement.objects.select_for_update().get(pk=judgement_id)
            if judgement.status not in DECIDED:
                raise overrides.OverrideConflict(
                    f"Judgement {judgement_id} is {judgement.status}: only an approved or "
                    "rejected verdict can be confirmed."
                )
            if judgement.escalated:
                raise overrides.escalated_conflict(judgement)
            if judgement.reviewed:
                raise already_reviewed(judgement_id)
            stored = Confirmation.objects.create(
                judgement=judgement, by=user, panel_status=judgement.status, reason=reason
            )
            chain_record.confirmation(stored)
            webhooks.enqueue(judgement.root_id or judgement_id, webhooks.CONFIRMED)
            events.announce_review(judgement_id)
            return stored
    except IntegrityError:
        raise already_reviewed(judgement_id) from None


def already_reviewed(judgement_id: int) -> overrides.OverrideConflict:
    return overrides.OverrideConflict(
        f"Judgement {judgement_id} was already reviewed; a review cannot be changed."
    )
