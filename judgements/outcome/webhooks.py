"""Signed webhooks: a judgement's end (or override) POSTed to its callback_url.

    callback_url checked at submit  ->  allow-listed host (MAGI_WEBHOOK_HOSTS), https
    status change (transitions, overrides)  ->  enqueue: a WebhookDelivery row, in the
                                               same transaction as the change
    every worker (EngineRunner.deliver_webhooks_forever)  ->  deliver_due: claim one due
        delivery with the lease every background job uses (models/leases.py), POST it
        signed, record the attempt, `settle` it; 2xx delivered, else retried with
        exponential backoff up to MAGI_WEBHOOK_MAX_ATTEMPTS, then failed

Signatures follow the Standard Webhooks convention: `webhook-id` (the delivery's, the same
on every retry), `webhook-timestamp` (unix seconds) and `webhook-signature: v1,<base64
HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the base64-decoded part of the
creator's `whsec_` secret. The worker renews its lease while it posts (engine/lease.py
`renewing`). A delivery whose worker dies keeps its claimed attempt row (no outcome)
and is taken again once its lease expires: none is lost, some may arrive twice (at
least once), which the stable, signed webhook-id lets a receiver drop.
"""

import base64
import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from email.message import Message
from typing import IO, TypedDict
from urllib.parse import urlsplit

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import close_old_connections, transaction
from django.db.models import F
from django.utils import timezone

from judgements.infrastructure.database import db_call
from judgements.models import (
    DeliveryStates,
    DeliveryStatus,
    Judgement,
    WebhookAttempt,
    WebhookDelivery,
    WebhookSecret,
)
from judgements.models.leases import RELEASED
from judgements.models.magi_settings import magi_settings
from judgements.models.states import Move, Told, transition
from judgements.outcome import answers

log = logging.getLogger(__name__)

FINISHED = "judgement.finished"  # approved or rejected by the panel (or held for review)
FAILED = "judgement.failed"  # error: a call failed for good, or its time ran out
OVERRIDDEN = "judgement.overridden"  # a human put another verdict in force
CONFIRMED = "judgement.confirmed"  # a human reviewed the panel's verdict and kept it
EVENTS = (FINISHED, FAILED, OVERRIDDEN, CONFIRMED)
# The audit log signed a checkpoint (outcome/checkpoints.py): to its subscribers
# (MAGI_AUDIT_CHECKPOINT_WEBHOOKS), about no judgement.
CHECKPOINT = "log.checkpoint"

URL_MAX_CHARS = 2000
# What a receiver answers is not used; reading a little lets the connection close cleanly.
ANSWER_READ_BYTES = 65_536
IN_FLIGHT = "no outcome recorded: in flight, or its worker stopped"


# --- the callback URL ------------------------------------------------------------------


def allowed(scheme: str, host: str) -> bool:
    """Is this host on the allow-list for this scheme? `host.example.com` and
    `*.example.com` (any subdomain, not the domain itself) allow https; `http://host`
    allows plain http (and https) for that exact host only."""
    for entry in magi_settings.MAGI_WEBHOOK_HOSTS:
        entry = entry.strip().lower()
        if entry.startswith("http://"):
            if host == entry.removeprefix("http://") and scheme in ("http", "https"):
                return True
        elif scheme == "https":
            if entry.startswith("*."):
                if host.endswith(entry[1:]) and len(host) > len(entry) - 1:
                    return True
            elif host == entry:
                return True
    return False


def callback_url_errors(value: object, user: User | None) -> list[str]:
    """What is wrong with a callback_url for this user's judgement; [] when it is fine."""
    if not isinstance(value, str):
        return ["Must be a string: an https URL."]
    if len(value) > URL_MAX_CHARS:
        return [f"Must be at most {URL_MAX_CHARS} characters (it has {len(value)})."]
    try:
        URLValidator(schemes=["http", "https"])(value)
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except (ValidationError, ValueError):
        return ["Must be an absolute http(s) URL, such as https://hooks.example.com/magi."]
    if parts.username is not None or parts.password is not None:
        return ["Must not hold a user name or password."]
    host = (parts.hostname or "").lower()
    if not magi_settings.MAGI_WEBHOOK_HOSTS:
        return ["This deployment sends no webhooks: MAGI_WEBHOOK_HOSTS is empty."]
    if not allowed(parts.scheme, host):
        if parts.scheme == "http" and allowed("https", host):
            return [f"Must use https: plain http is not allowed for {host}."]
        return [f"The host {host} is not on this deployment's webhook allow-list."]
    if user is not None and not WebhookSecret.objects.filter(user=user).exists():
        return [
            "You have no webhook secret to sign it with: ask an administrator to run "
            f"`manage.py webhook_secret {user.get_username()}`."
        ]
    return []


# --- signing --------------------------------------------------------------------------


def signature(key: bytes, webhook_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{webhook_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()


def body_of(delivery: WebhookDelivery) -> bytes:
    return json.dumps(delivery.payload, ensure_ascii=False, separators=(",", ":")).encode()


# --- storing an event -----------------------------------------------------------------


def enqueue(judgement_id: int, event: str) -> WebhookDelivery | None:
    """Store the event for delivery if the judgement has a callback_url. Call it inside
    the transaction that changes the judgement: both are stored, or neither."""
    if event not in EVENTS:
        raise ValueError(f"unknown webhook event {event!r}")
    found = Judgement.objects.filter(pk=judgement_id).values_list("callback_url", flat=True)
    url = found.first()
    if not url:
        return None
    judgement = Judgement.objects.with_results().get(pk=judgement_id)
    payload = {"event": event, **answers.Judgement.from_record(judgement).as_json()}
    return WebhookDelivery.objects.create(
        judgement=judgement, event=event, url=url, payload=payload
    )


class CheckpointEvent(TypedDict):
    """A checkpoint webhook's body (docs/evidence.md): the signed note, its size, its root."""

    event: str
    checkpoint: str
    size: int
    root_hash: str


def enqueue_checkpoint(url: str, payload: CheckpointEvent) -> WebhookDelivery:
    """Store a checkpoint event for one subscriber; in the caller's transaction."""
    return WebhookDelivery.objects.create(
        judgement=None, event=CHECKPOINT, url=url, payload=payload
    )


# --- delivering -----------------------------------------------------------------------


def claim_one(
    worker_id: str, skip: frozenset[int] = frozenset()
) -> tuple[WebhookDelivery, WebhookAttempt] | None:
    """Lease the oldest due delivery (LeaseQuerySet.claim) and store its attempt, before
    anything is sent. The attempt is counted now, so a receiver that kills every worker
    runs out of attempts instead of being retried for ever."""
    now = timezone.now()
    with transaction.atomic():
        claimed = (
            WebhookDelivery.objects.due(now)
            .exclude(pk__in=skip)
            .claim(
                worker_id,
                1,
                order=("next_attempt_at", "pk"),
                now=now,
                attempt_count=F("attempt_count") + 1,
            )
        )
        if not claimed:
            return None
        delivery = WebhookDelivery.objects.select_related("judgement").get(pk=claimed[0][0])
        attempt = WebhookAttempt.objects.create(
            delivery=delivery,
            number=delivery.attempt_count,
            worker=worker_id,
            started_at=now,
            error=IN_FLIGHT,
        )
    return delivery, attempt


class NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect could point anywhere, past the allow-list: it counts as a failure."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Message,
        newurl: str,
    ) -> None:
        return None


# No proxies from the environment, no redirects: the request goes to the allowed host.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), NoRedirects)


def post(delivery: WebhookDelivery, key: bytes) -> tuple[int | None, str]:
    """POST the delivery signed; (status code or None, error text)."""
    body = body_of(delivery)
    timestamp = int(time.time())
    request = urllib.request.Request(
        delivery.url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "MAGI-webhooks/1",
            "webhook-id": delivery.webhook_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature(key, delivery.webhook_id, timestamp, body),
        },
    )
    try:
        with OPENER.open(request, timeout=magi_settings.MAGI_WEBHOOK_TIMEOUT) as answer:
            answer.read(ANSWER_READ_BYTES)
            return answer.status, ""
    except urllib.error.HTTPError as exc:
        note = "redirects are not followed" if 300 <= exc.code < 400 else ""
        return exc.code, note
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return None, f"{type(exc).__name__}: {reason}"


def backoff_seconds(attempts_made: int) -> float:
    initial: float = magi_settings.MAGI_WEBHOOK_RETRY_INITIAL_WAIT
    longest: float = magi_settings.MAGI_WEBHOOK_RETRY_MAX_WAIT
    return min(initial * 2.0 ** (attempts_made - 1), longest)


def key_of(delivery: WebhookDelivery) -> bytes | None:
    """What a delivery is signed with: its judgement's creator's secret, or for the log's
    checkpoints MAGI_AUDIT_CHECKPOINT_WEBHOOK_SECRET; None when there is none."""
    if delivery.judgement is None:
        secret = magi_settings.MAGI_AUDIT_CHECKPOINT_WEBHOOK_SECRET
        return base64.b64decode(secret.removeprefix(WebhookSecret.PREFIX)) if secret else None
    creator_id = delivery.judgement.creator_id
    found = (
        WebhookSecret.objects.filter(user_id=creator_id).first() if creator_id is not None else None
    )
    return None if found is None else found.key()


def attempt(delivery: WebhookDelivery, attempt_row: WebhookAttempt, worker_id: str) -> str:
    """Send one claimed delivery and record how it went; returns the delivery's status."""
    key = key_of(delivery)
    parts = urlsplit(delivery.url)
    final = False
    started = time.monotonic()
    if key is None:
        code, error, final = None, "no webhook secret to sign it with", True
    elif not allowed(parts.scheme, (parts.hostname or "").lower()):
        code, error, final = None, "the host is no longer on MAGI_WEBHOOK_HOSTS", True
    else:
        code, error = post(delivery, key)
    duration_ms = int((time.monotonic() - started) * 1000)
    if code is not None and 200 <= code < 300:
        move = DeliveryStates.deliver
    elif final or delivery.attempt_count >= magi_settings.MAGI_WEBHOOK_MAX_ATTEMPTS:
        move = DeliveryStates.give_up
    else:
        move = DeliveryStates.retry
    with transaction.atomic():
        WebhookAttempt.objects.filter(pk=attempt_row.pk).update(
            status_code=code, duration_ms=duration_ms, error=error
        )
        settle(delivery, worker_id, code or error, move, timezone.now())
    return str(move.targets[0])


def settle(
    delivery: WebhookDelivery, worker_id: str, outcome: object, move: Move, now: datetime
) -> bool:
    """pending, held by `worker_id` -> delivered | failed | pending (its next attempt
    later, after the backoff), releasing the lease: the one change of a delivery's state,
    through the one transition function. A worker that took too long leaves the delivery
    to the one that took it over (its attempt is recorded all the same): False."""
    (target,) = move.targets
    if move is DeliveryStates.retry:
        wait = timedelta(seconds=backoff_seconds(delivery.attempt_count))
        changes: dict[str, datetime] = {"next_attempt_at": now + wait}
    else:
        changes = {"finished_at": now}
    about = (
        f"webhook {delivery.webhook_id} ({delivery.event}, judgement {delivery.judgement_id}) "
        f"attempt {delivery.attempt_count}"
    )
    moved = transition(
        WebhookDelivery.objects.filter(pk=delivery.pk).held_by(worker_id),
        move,
        target,
        worker=worker_id,
        told=[Told(about, DeliveryStatus.PENDING, f": {outcome}")],
        **RELEASED,
        **changes,
    )
    if not moved:
        log.info("%s: %s; not ours any more: left to its new holder", about, outcome)
    return bool(moved)


def renew_held(worker_id: str) -> int:
    """Renew the worker's lease on the delivery it is posting (if any)."""
    return WebhookDelivery.objects.filter(status=DeliveryStatus.PENDING).renew(worker_id)


def deliver_due(worker_id: str, limit: int = 20) -> int:
    """One cycle: send up to `limit` due deliveries, one at a time. Returns how many were
    attempted (so the caller knows whether more may be waiting). Each delivery is tried
    at most once per cycle, even when its backoff is zero."""
    close_old_connections()
    tried: set[int] = set()
    while len(tried) < limit:
        claimed = claim_one(worker_id, frozenset(tried))
        if claimed is None:
            break
        attempt(*claimed, worker_id)
        tried.add(claimed[0].pk)
    return len(tried)


# POSTs wait on other servers for seconds: they get a thread of their own, never one of
# the engine's database threads (judgements/infrastructure/database.py).
_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="magi-webhooks")
adeliver_due = db_call(deliver_due, executor=_executor)
