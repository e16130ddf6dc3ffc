"""How many judgements a user and an API token may start: each costs nine LLM calls.

Counted in the database, so the limits hold however many web processes there are. The
count and the insert happen under a lock on the user's row (SQLite: the database's one
write lock), so a burst from several processes cannot slip past a limit together.
"""

import math
from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils import timezone

from judgements.core.errors import Refused
from judgements.models.access import ApiToken
from judgements.models.choices import FINISHED_STATUSES
from judgements.models.judgements import Judgement
from judgements.models.magi_settings import magi_settings

# No judgement of the user's will finish at a known time: ask the client to come back in
# about the time a judgement takes.
UNFINISHED_RETRY_SECONDS = 30


def check(user: User | None, api_token: ApiToken | None) -> None:
    now = timezone.now()
    window = magi_settings.MAGI_RATE_WINDOW_SECONDS
    since = now - timedelta(seconds=window)
    # An evaluation run's judgements are limited as a run (check_runs), not one by one:
    # a run of a 200-case suite must not lock its user out of judging for the window.
    mine = Judgement.objects.filter(creator=user, evaluation_run__isnull=True)
    per_user = magi_settings.MAGI_RATE_LIMIT_PER_USER
    if per_user:
        recent = mine.filter(created_at__gte=since)
        if (count := recent.count()) >= per_user:
            wait = retry_after(recent, count - per_user, now, window)
            raise Refused(
                f"You have started {per_user} judgements in the last {window} seconds, the "
                f"most allowed. Try again in {wait} seconds.",
                wait,
            )
    per_token = magi_settings.MAGI_RATE_LIMIT_PER_TOKEN
    if api_token is not None and per_token:
        recent = Judgement.objects.filter(
            api_token=api_token, created_at__gte=since, evaluation_run__isnull=True
        )
        if (count := recent.count()) >= per_token:
            wait = retry_after(recent, count - per_token, now, window)
            raise Refused(
                f"This API token has started {per_token} judgements in the last {window} "
                f"seconds, the most allowed. Try again in {wait} seconds.",
                wait,
            )
    unfinished = magi_settings.MAGI_UNFINISHED_PER_USER
    if unfinished and mine.exclude(status__in=FINISHED_STATUSES).count() >= unfinished:
        raise Refused(
            f"You have {unfinished} judgements not finished yet, the most allowed; start "
            "another when one has finished.",
            UNFINISHED_RETRY_SECONDS,
        )


def check_runs(user: User | None) -> None:
    """Refuse a new evaluation run while the user has MAGI_UNFINISHED_RUNS_PER_USER runs
    with judgements still queued or running: each run can queue thousands of calls."""
    allowed = magi_settings.MAGI_UNFINISHED_RUNS_PER_USER
    if not allowed or user is None:
        return
    unfinished = (
        Judgement.objects.filter(evaluation_run__creator=user)
        .exclude(status__in=FINISHED_STATUSES)
        .values("evaluation_run")
        .distinct()
        .count()
    )
    if unfinished >= allowed:
        raise Refused(
            f"You have {unfinished} evaluation runs not finished yet, the most allowed; "
            "start another when one has finished.",
            UNFINISHED_RETRY_SECONDS,
        )


def retry_after(recent: QuerySet[Judgement], excess: int, now: datetime, window: int) -> int:
    """Seconds until enough judgements have left the window for one more to fit."""
    times = recent.order_by("created_at").values_list("created_at", flat=True)
    leaving = next(iter(times[excess : excess + 1]), None)
    if leaving is None:
        return 1
    return max(1, math.ceil((leaving + timedelta(seconds=window) - now).total_seconds()))
