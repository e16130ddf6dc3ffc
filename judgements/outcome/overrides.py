"""A human's verdict over the panel's: who may give one, and storing it once.

The panel's own status stays on the judgement; the override is a separate row (one per
judgement, the database's unique constraint refusing a second) that records who, when,
from what to what and why. Nothing edits or deletes it (the admin shows it read-only).
"""

from dataclasses import dataclass
from typing import Any

from django import forms as django_forms
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from judgements.audit import record as chain_record
from judgements.core.errors import InvalidInput, MagiError
from judgements.infrastructure import events
from judgements.infrastructure.forms import TextField, field_of, validate_text
from judgements.models import DECISION_OF_STATUS, Decision, Judgement, Override, policy
from judgements.models.choices import ReviewRefusal
from judgements.models.panels import reviewed_panels
from judgements.outcome import webhooks
from judgements.outcome.notifications import reviewers_of

REASON_MAX_CHARS = 5000


class OverrideConflict(MagiError):
    """The judgement cannot be overridden now: not finished, or overridden already."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class OverrideForm(django_forms.Form):
    """The live page's form; the same checks as the API's apply (validate)."""

    decision = django_forms.ChoiceField(choices=Decision.choices, widget=django_forms.RadioSelect)
    reason = TextField(
        max_chars=REASON_MAX_CHARS,
        strip=False,
        widget=django_forms.Textarea(attrs={"rows": 3}),
        help_text="Why the panel's verdict is set aside; kept in the audit.",
    )

    def __init__(self, *args: Any, verdict: str | None = None, **kwargs: Any) -> None:
        """`verdict`: the verdict in force. Approved or rejected, the form offers only the
        other decision: overriding Approved with Approve would change nothing."""
        super().__init__(*args, **kwargs)
        current = DECISION_OF_STATUS.get(verdict) if verdict is not None else None
        if current is not None:
            decision = field_of(self, "decision", django_forms.ChoiceField)
            decision.choices = [
                (value, label) for value, label in Decision.choices if value != current
            ]
            decision.initial = decision.choices[0][0]


# Why someone who does not review judgements may not, as every surface says it.
NOT_A_REVIEWER = "You do not have the permission to review judgements."
# At most this many of the other reviewers are named in a four-eyes refusal.
NAMED_REVIEWERS = 5


@dataclass(frozen=True)
class Refusal:
    """Why a user may not confirm or override: `message` in words for them, and which
    rule said so (ReviewRefusal; None when they review no judgement at all)."""

    message: str
    reason: ReviewRefusal | None = None


def refusal(user: User | AnonymousUser, judgement: Judgement | None = None) -> Refusal | None:
    """Why `user` may not confirm or override `judgement` (Judgement.review_refusal:
    staff and holders of the override_judgement permission, or a reviewer of its panel;
    never the author on a four-eyes panel), or None when they may; with no judgement,
    whether they review any at all (the review queue). Four eyes says so, and who else
    may review it."""
    if not (user.is_authenticated and user.is_active):
        return Refusal(NOT_A_REVIEWER)
    if judgement is None:
        if policy.overrides_what_they_see(user):
            return None
        return None if reviewed_panels(user).exists() else Refusal(NOT_A_REVIEWER)
    reason = judgement.review_refusal(user)
    if reason is None:
        return None
    if reason == ReviewRefusal.FOUR_EYES:
        return Refusal(four_eyes_message(judgement, user), reason)
    return Refusal(NOT_A_REVIEWER, reason)


def may_override(user: User | AnonymousUser, judgement: Judgement | None = None) -> bool:
    """Whether `user` may confirm or override `judgement`, or review any judgement at all
    (refusal says why not)."""
    return refusal(user, judgement) is None


def four_eyes_message(judgement: Judgement, user: User) -> str:
    """Four eyes, to the author of a judgement: whose it is, and who else may review it
    (its panel's other reviewers, notifications.reviewers_of, or staff)."""
    others = sorted(reviewer.get_username() for reviewer in reviewers_of(judgement))
    named = ", ".join(others[:NAMED_REVIEWERS])
    if len(others) > NAMED_REVIEWERS:
        named += f" and {len(others) - NAMED_REVIEWERS} more"
    staff = "another member of staff" if user.is_staff else "staff"
    who = f"Another of its reviewers ({named}) or {staff}" if others else f"Only {staff}"
    return (
        f'Four eyes: you started judgement {judgement.pk}, and its panel "{judgement.panel}" '
        f"lets nobody confirm or override a judgement they started. {who} may review it."
    )


def validate(decision: str, reason: str) -> tuple[str, str]:
    """The decision and reason as given, or InvalidInput naming each bad field."""
    errors: dict[str, list[str]] = {}
    if decision not in Decision.values:
        errors["decision"] = [f"Must be one of {', '.join(Decision.values)}."]
    if problems := reason_errors(reason):
        errors["reason"] = problems
    if errors:
        raise InvalidInput(errors)
    return decision, reason


def reason_errors(reason: object) -> list[str]:
    """What is wrong with a reviewer's reason (an override's or a confirmation's)."""
    if not isinstance(reason, str) or not reason.strip():
        return ["A reason is required."]
    try:
        validate_text(reason, REASON_MAX_CHARS)
    except ValidationError as exc:
        return list(exc.messages)
    return []


def override(judgement_id: int, user: User, decision: str, reason: str) -> Override:
    """Put a human's decision in force over the panel's; raises InvalidInput for bad input
    and OverrideConflict if the judgement is not finished or already overridden.
    The caller checks may_override and visibility."""
    decision, reason = validate(decision, reason)
    try:
        with transaction.atomic():
            judgement = Judgement.objects.select_for_update().get(pk=judgement_id)
            if not judgement.is_finished:
                raise OverrideConflict(
                    f"Judgement {judgement_id} is {judgement.status}: only a finished judgement "
                    "can be overridden."
                )
            if judgement.escalated:
                raise escalated_conflict(judgement)
            if Override.objects.filter(judgement=judgement).exists():
                raise already_overridden(judgement_id)
            stored = Override.objects.create(
                judgement=judgement,
                by=user,
                panel_status=judgement.status,
                decision=decision,
                reason=reason,
            )
            chain_record.override(stored)
            # A story's webhook goes to its first judgement (docs/escalation.md).
            webhooks.enqueue(judgement.root_id or judgement_id, webhooks.OVERRIDDEN)
            events.announce_review(judgement_id)
            return stored
    except IntegrityError:
        # Another override was stored between the look-up and the insert.
        raise already_overridden(judgement_id) from None


def apply_form(judgement_id: int, user: User, form: OverrideForm) -> str | None:
    """Put a valid form's verdict in force. Returns why it was refused (already
    overridden, not finished), or None; field errors go onto the form."""
    try:
        override(judgement_id, user, form.cleaned_data["decision"], form.cleaned_data["reason"])
    except InvalidInput as exc:
        for field, field_messages in exc.errors.items():
            for message in field_messages:
                form.add_error(field, message)
    except OverrideConflict as exc:
        return exc.message
    return None


def escalated_conflict(judgement: Judgement) -> OverrideConflict:
    """A level that escalated is not reviewed: the next level's verdict is in force, and
    the story waits for a person, if at all, at its last level (docs/escalation.md)."""
    last = judgement.in_force()
    return OverrideConflict(
        f"Judgement {judgement.pk} escalated to level {judgement.level + 1}: its verdict is not "
        f"in force. Review the story's last level, judgement {last.pk}."
    )


def already_overridden(judgement_id: int) -> OverrideConflict:
    return OverrideConflict(
        f"Judgement {judgement_id} was already overridden; an override cannot be changed."
    )
