"""Telling reviewers that a verdict waits for them, by email.

A held verdict, or a contested one on a panel that asks for it (Panel.notify_contested),
is told to the panel's reviewers (models/panels.Panel.reviewing_users: named members, the
whole team, or the team's reviewers of every panel; never the author on a four-eyes
panel). Nothing on a judgement's path calls this: every worker runs `deliver` on its
sweep (engine/runner.py), which first queues a Notification row per reviewer for each
judgement not looked at yet, then sends what is due: a message per judgement, or one
digest every N minutes for whoever asked for that. Rows are claimed with the lease
every background job uses (models/leases.py) in a short transaction that skips rows
another worker locked, and the emails go out after it with no lock held (the worker
renews the lease meanwhile: engine/lease.py `renewing`), so two live workers never send
the same one; a failed send stays unsent, with its error, and is tried again next sweep.
Each row changes state through `settle` (its graph, models/notifications.py
`NotificationStates`). A worker that dies between sending and recording it
leaves the row to be sent again once its lease expires: at least once, with the same
Message-ID (`message_id`), which lets a mail system drop the second copy.
"""

import hashlib
import logging
from collections import defaultdict
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import EmailMessage, get_connection
from django.core.mail.backends.base import BaseEmailBackend
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from judgements.models import (
    Judgement,
    Notification,
    NotificationChoice,
    NotificationStatus,
    Status,
)
from judgements.models import NotificationStates as States
from judgements.models.judgements import held, waiting_for_review
from judgements.models.leases import RELEASED
from judgements.models.magi_settings import magi_settings
from judgements.models.states import Move, Told, transition

log = logging.getLogger(__name__)

BATCH = 50
SUBJECT_MAX_CHARS = 120


def worth_telling() -> Q:
    """Decided and waiting for a person, and either held or contested on a panel that
    asks to be told: `Judgement.reviewers_told_at` is set once its reviewers are queued."""
    return waiting_for_review() & (held() | Q(contested=True, panel__notify_contested=True))


def reviewers_of(judgement: Judgement) -> list[User]:
    """Who reviews it (Panel.reviewing_users: the members of its panel's team named as
    reviewers, every member where the whole team reviews, and the team's reviewers of
    every panel); never its author on a four-eyes panel."""
    panel = judgement.panel
    if panel is None:
        return []
    members = panel.reviewing_users()
    if panel.four_eyes and judgement.creator_id is not None:
        members = members.exclude(pk=judgement.creator_id)
    return list(members.filter(is_active=True))


def queue(limit: int = BATCH) -> int:
    """A Notification row per reviewer for judgements not looked at yet. Returns how many
    judgements were looked at."""
    with transaction.atomic():
        due = list(
            Judgement.objects.filter(worth_telling(), reviewers_told_at__isnull=True)
            .filter(evaluation_run__isnull=True)
            .select_related("panel__team")
            .select_for_update(skip_locked=True, of=("self",))[:limit]
        )
        for judgement in due:
            Notification.objects.bulk_create(
                (Notification(judgement=judgement, user=user) for user in reviewers_of(judgement)),
                ignore_conflicts=True,
            )
        Judgement.objects.filter(pk__in=[j.pk for j in due]).update(
            reviewers_told_at=timezone.now()
        )
    return len(due)


def choice_of(user: User) -> NotificationChoice:
    return NotificationChoice.objects.filter(user=user).first() or NotificationChoice(user=user)


def claim(worker_id: str, now: datetime, limit: int = BATCH * 4) -> list[Notification]:
    """Unsent rows nobody holds, leased to `worker_id` (LeaseQuerySet.claim): the emails
    go out after its short transaction commits."""
    claimed = Notification.objects.unsent().claim(
        worker_id, limit, order=("created_at", "pk"), now=now
    )
    return list(
        Notification.objects.filter(pk__in=[pk for (pk,) in claimed])
        .select_related("judgement__panel", "user")
        .order_by("created_at", "pk")
    )


def settle(ids: list[int], worker_id: str, outcome: str, move: Move, **changes: object) -> int:
    """unsent, held by `worker_id` -> sent (with its `sent_at`) or unsent again (its
    error), releasing the lease: the one change of a notification's state, through the
    one transition function. Returns how many rows were still ours."""
    (target,) = move.targets
    updated = transition(
        Notification.objects.filter(pk__in=ids).held_by(worker_id),
        move,
        target,
        worker=worker_id,
        told=[Told(f"notifications {ids} ({outcome})", NotificationStatus.UNSENT)],
        **RELEASED,
        **changes,
    )
    if updated < len(ids):
        log.info("notifications %s: %s not ours any more", ids, len(ids) - updated)
    return updated


def give_back(ids: list[int], worker_id: str) -> int:
    """A digest not due yet: its rows freed unchanged for the sweep that sends it, at
    every sweep (no change of state: logged at DEBUG)."""
    log.debug("notifications %s: their digest is not due yet, freed by %s", ids, worker_id)
    return Notification.objects.filter(pk__in=ids).unsent().release(worker_id)


def send_due(worker_id: str, now: datetime | None = None) -> int:
    """Send what is due to each person: every unsent notification at once, or (with a
    digest) all of them together once the last digest is N minutes old. Returns the
    messages sent."""
    now = now or timezone.now()
    by_user: dict[int, list[Notification]] = defaultdict(list)
    for notification in claim(worker_id, now):
        by_user[notification.user_id].append(notification)
    connection = get_connection(fail_silently=False)
    sent = 0
    for rows in by_user.values():
        sent += send_to(rows[0].user, rows, now, connection, worker_id)
    return sent


def send_to(
    user: User,
    rows: list[Notification],
    now: datetime,
    connection: BaseEmailBackend,
    worker_id: str,
) -> int:
    choice = choice_of(user)
    held = [row.pk for row in rows]
    if not choice.enabled or not user.email or not settings.EMAIL_HOST:
        # Nothing to send them: the rows are done, not kept to pile up.
        settle(held, worker_id, "nothing to send them", States.send, sent_at=now)
        return 0
    if choice.digest_minutes:
        last = choice.last_digest_at
        if last is not None and now - last < timedelta(minutes=choice.digest_minutes):
            # Not due yet: free them for the sweep that sends the digest.
            give_back(held, worker_id)
            return 0
        messages = [(digest_subject(rows), digest_body(rows), rows)]
    else:
        messages = [(subject(row.judgement), body(row.judgement), [row]) for row in rows]
    count = 0
    for title, text, covered in messages:
        ids = [row.pk for row in covered]
        email = EmailMessage(title, text, to=[user.email], connection=connection)
        email.extra_headers["Message-ID"] = message_id(ids)
        try:
            email.send()
        except Exception as exc:  # an SMTP server away or refusing: tried again next sweep
            log.warning("notification to %s not sent: %s", user, exc)
            error = f"{type(exc).__name__}: {exc}"[:500]
            retried = {"attempts": F("attempts") + 1, "error": error}
            settle(ids, worker_id, "not sent", States.retry, **retried)
            continue
        settle(ids, worker_id, "sent", States.send, sent_at=now, error="")
        count += 1
    if choice.digest_minutes and count:
        choice.last_digest_at = now
        choice.save()
    return count


def message_id(ids: list[int]) -> str:
    """The same Message-ID each time these rows are sent: a copy sent again after its
    worker died (at least once) is the same message to the mail systems that drop
    duplicates."""
    host = urlsplit(magi_settings.MAGI_SITE_URL).hostname or "magi.invalid"
    key = hashlib.sha256(",".join(map(str, sorted(ids))).encode()).hexdigest()[:24]
    return f"<notification.{key}@{host}>"


def renew_held(worker_id: str) -> int:
    """Renew the worker's leases on the emails it is sending."""
    return Notification.objects.unsent().renew(worker_id)


def deliver(worker_id: str) -> int:
    """One sweep's work: queue what is new, send what is due."""
    queue()
    return send_due(worker_id)


# --- what a message says ------------------------------------------------------------


def one_line(text: str, limit: int = SUBJECT_MAX_CHARS) -> str:
    """Untrusted text for a header: no line breaks (header injection), bounded."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def link(judgement: Judgement) -> str:
    return f"{magi_settings.MAGI_SITE_URL}/judgements/{judgement.pk}/"


def subject(judgement: Judgement) -> str:
    return f"MAGI: waiting for your review: {one_line(judgement.title)}"


def body(judgement: Judgement) -> str:
    panel = Status(judgement.status).label
    state = "held for a person" if judgement.is_held else "contested"
    reasons = judgement.contest_reasons or ["(no reason recorded)"]
    lines = [
        f"{judgement.title}",
        "",
        f"The panel's verdict: {panel}, {state}.",
        "Why it waits:",
        *[f"- {reason}" for reason in reasons],
        "",
        f"Review it: {link(judgement)}",
        "",
        "You get this because you review this panel; turn these emails off at "
        f"{magi_settings.MAGI_SITE_URL}/account/notifications/.",
    ]
    return "\n".join(lines) + "\n"


def digest_subject(rows: list[Notification]) -> str:
    return f"MAGI: {len(rows)} verdict{'s' if len(rows) != 1 else ''} waiting for your review"


def digest_body(rows: list[Notification]) -> str:
    parts = [body(row.judgement) for row in rows]
    return ("\n" + "-" * 40 + "\n\n").join(parts)
