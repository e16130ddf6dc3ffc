"""A judgement: its state and its verdict in force. Who may see and review it is the access
policy's (models/policy.py), asked by its methods and its QuerySet's; the case it is made
from is intake's (intake/case.py, intake/rows.py)."""

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone

from judgements.core import rules
from judgements.models import policy
from judgements.models.chain import Receipt
from judgements.models.choices import (
    DECISION_OF_STATUS,
    FINISHED_STATUSES,
    ReviewRefusal,
    Status,
    Trust,
    ids_from_one,
)
from judgements.models.leases import Leased, LeaseQuerySet, lease_expired
from judgements.models.magi_settings import magi_settings
from judgements.models.outcome import Confirmation, Override
from judgements.models.panels import reviewed_panels
from judgements.models.states import Move, StateGraph

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class JudgementQuerySet(LeaseQuerySet["Judgement"]):
    """Who may work on which judgement: the lease (models/leases.py) and the status
    queries of the engine."""

    def with_results(self) -> "JudgementQuerySet":
        """What a judgement's answer reads (outcome/answers.py), in a fixed number of queries."""
        # Its receipts as signed, newest first: the first is the one in force
        # (judgements/audit/receipts.py).
        in_force = models.Prefetch(
            "receipts",
            queryset=Receipt.objects.select_related("entry").order_by("-id"),
            to_attr="receipts_newest_first",
        )
        return self.select_related(
            "override__by", "confirmation__by", "panel", "certificate"
        ).prefetch_related("agents__decisions", "checks", in_force)

    def claimable(self, now: datetime) -> "JudgementQuerySet":
        """Queued judgements, and started ones nobody holds whose time is not up (those
        past their deadline are expired instead, see `overdue`)."""
        deadline = now - timedelta(seconds=magi_settings.MAGI_JUDGEMENT_TIMEOUT)
        return self.filter(
            models.Q(status=Status.IDLE)
            | (
                models.Q(status=Status.JUDGING)
                & lease_expired(now)
                & (models.Q(started_at__isnull=True) | models.Q(started_at__gte=deadline))
            )
        )

    def overdue(self, now: datetime) -> "JudgementQuerySet":
        """Started judgements nobody holds whose time is up: resuming could not finish."""
        deadline = now - timedelta(seconds=magi_settings.MAGI_JUDGEMENT_TIMEOUT)
        return self.filter(lease_expired(now), status=Status.JUDGING, started_at__lt=deadline)

    def held_by(self, worker_id: str) -> "JudgementQuerySet":
        """Held while judging: an ended judgement's lease was released with its status."""
        return super().held_by(worker_id).filter(status=Status.JUDGING)

    # Who sees which, and the review state, as Judgement.visible_to, .reviewed and
    # .is_held say them for one judgement: the history list, the review queue and the API
    # ask the database the same questions.

    def visible_to(self, user: "User") -> "JudgementQuerySet":
        """Staff: all; anyone else: what they started and what their teams own."""
        return policy.made_rows_visible(self, user)

    def reviewable_by(self, user: "User") -> "JudgementQuerySet":
        """What `user` may confirm or override (Judgement.reviewable_by): staff and holders
        of the override permission what they see, a panel's reviewers its judgements; on a
        four-eyes panel nobody their own (policy.reviewable_rows)."""
        return policy.reviewable_rows(self, user, reviewed_panels(user))

    def unreviewed(self) -> "JudgementQuerySet":
        return self.filter(UNREVIEWED)


# No person has confirmed or overridden it: `not Judgement.reviewed` as a condition.
UNREVIEWED = models.Q(override__isnull=True, confirmation__isnull=True)


# Its verdict went on to the next level of its escalation (docs/escalation.md): that
# level's verdict is in force, so this one neither waits for a person nor is held.
NOT_ESCALATED = models.Q(escalated=False)


def held() -> models.Q:
    """Judgement.is_held as a condition: decided, contested and asked to be held (or of
    unmeasured trust and asked to hold that), not escalated, and no person has confirmed
    or overridden it."""
    decided = models.Q(status__in=[Status.APPROVED, Status.REJECTED]) & NOT_ESCALATED
    asked = models.Q(contested=True, hold_contested=True) | models.Q(
        trust=Trust.UNMEASURED, hold_unmeasured=True
    )
    return decided & asked & UNREVIEWED


def waiting_for_review() -> models.Q:
    """What the review queue lists: decided, contested or held, and no person has
    confirmed or overridden it yet."""
    return (
        models.Q(status__in=[Status.APPROVED, Status.REJECTED])
        & (models.Q(contested=True) | held())
        & UNREVIEWED
        & NOT_ESCALATED
    )


class JudgementStates(StateGraph):
    """A judgement's states and moves (engine/lifecycle.py makes each move, drawn at its
    top): queued idle, judging while a worker holds it, then its verdict or an error. A
    level of an escalation story whose verdict it does not keep ends by `escalate`: its
    verdict stored, marked `escalated`, the story's next level in force instead
    (docs/escalation.md)."""

    states, initial, unstored = Status, Status.IDLE, (Status.HELD,)
    claim = Move((Status.IDLE, Status.JUDGING), (Status.JUDGING,))
    finish = Move((Status.JUDGING,), (Status.APPROVED, Status.REJECTED))
    escalate = Move((Status.JUDGING,), (Status.APPROVED, Status.REJECTED))
    fail = Move((Status.JUDGING,), (Status.ERROR,))
    expire = Move((Status.JUDGING,), (Status.ERROR,))
    cancel = Move((Status.IDLE, Status.JUDGING), (Status.ERROR,))


class Judgement(Leased):
    title = models.CharField(max_length=200)
    content = models.TextField()
    status = JudgementStates.column()
    error_message = models.TextField(blank=True)
    error_round = models.PositiveSmallIntegerField(null=True, blank=True)
    error_agent = models.ForeignKey(
        "Agent", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="judgements",
    )
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The database, not the channel layer, says who runs a judgement: a worker holds a
    # lease (Leased: lease_owner, lease_expires_at) it keeps renewing; an expired lease
    # lets another worker resume the work.
    # The API token that started it, for the per-token rate limit (judgements/intake/limits.py).
    api_token = models.ForeignKey(
        "ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="judgements"
    )
    # Where its end (and any override) is POSTed, signed (judgements/outcome/webhooks.py). None:
    # no webhook, which an empty string would blur with a bad URL.
    callback_url = models.CharField(max_length=2000, null=True, blank=True)  # noqa: DJ001 - None: no webhook
    # The saved panel it started from, if any. Its agents are copied into Agent rows, so
    # editing the panel later changes no judgement.
    panel = models.ForeignKey(
        "Panel", null=True, blank=True, on_delete=models.SET_NULL, related_name="judgements"
    )
    # When its reviewers were found and queued a notification (outcome/notifications.py);
    # None: not yet, or nothing to tell.
    reviewers_told_at = models.DateTimeField(null=True, blank=True)
    # The team it belongs to: its panel's, else its token's, else its run's (intake/rows.py).
    team = models.ForeignKey(
        "Team", null=True, blank=True, on_delete=models.SET_NULL, related_name="judgements"
    )
    # Set when an evaluation run created it: which case of the run's suite, which repeat.
    evaluation_run = models.ForeignKey(
        "EvaluationRun",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="judgements",
    )
    suite_case = models.ForeignKey(
        "SuiteCase", null=True, blank=True, on_delete=models.SET_NULL, related_name="judgements"
    )
    repeat = models.PositiveSmallIntegerField(null=True, blank=True)
    # The contested mark (judgements/core/contested.py), stored with the panel's verdict: None
    # until the judgement is decided. `contest_reasons` says why in words (the counted
    # signals); `contest_signals` names every kind that fired, counted or not.
    contested = models.BooleanField(null=True, blank=True)
    contest_reasons = models.JSONField(default=list, blank=True)
    contest_signals = models.JSONField(default=list, blank=True)
    # Asked at submit (the case, its saved panel or MAGI_HOLD_CONTESTED): a contested
    # verdict is held until a person confirms or overrides it.
    hold_contested = models.BooleanField(default=False)
    # What a user may do with the verdict (Trust): set with the mark. `certificate` is the
    # panel's certificate the mark was read against, if it held one for these agents.
    trust = models.CharField(  # noqa: DJ001 - None until decided
        max_length=16, choices=Trust.choices, null=True, blank=True
    )
    certificate = models.ForeignKey(
        "Certificate", null=True, blank=True, on_delete=models.SET_NULL, related_name="judgements"
    )
    # The verdict's confidence from the agents' answers and from the round-1 probes
    # (judgements/core/confidence.py panel_confidence); None: unknown.
    answer_confidence = models.FloatField(null=True, blank=True)
    probe_confidence = models.FloatField(null=True, blank=True)
    # The checks asked at submit (CheckKind values), so a resumed judgement runs the same.
    checks_asked = models.JSONField(default=list, blank=True)
    # The prompt variants it runs (judgements/core/prompt_variants.py), set by an evaluation
    # run or the quality bench; [] for every other judgement: the prompts as measured.
    prompt_variants = models.JSONField(default=list, blank=True)
    # MAGI_HOLD_UNMEASURED at submit: a verdict whose trust is not measured is held.
    hold_unmeasured = models.BooleanField(default=False)
    # How often a worker claimed it from another whose lease had run out (operators'
    # metrics: a worker dying, or a database outage longer than the lease).
    takeovers = models.PositiveIntegerField(default=0)
    # Hidden from its owner's history list (judgements/web/history.py), never deleted: the
    # audit, the admin and the API keep it.
    hidden_at = models.DateTimeField(null=True, blank=True)
    # Escalation (docs/escalation.md): one judgement's story runs as levels, each an
    # ordinary judgement of its own panel on the same content. `level` counts from 1 (the
    # judgement submitted); a later level names the one it escalates (`escalated_from`)
    # and the story's first (`root`). `escalated`: this level could not keep its verdict
    # and the next level's is in force instead.
    # db_default too: a row written by SQL alone (the audit's tests of rows added behind
    # MAGI's back) is a first level that did not escalate.
    level = models.PositiveSmallIntegerField(default=1, db_default=1)
    escalated_from = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="escalation"
    )
    root = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.CASCADE, related_name="later_levels"
    )
    escalated = models.BooleanField(default=False, db_default=False)

    objects = JudgementQuerySet.as_manager()

    class Meta:
        constraints = [ids_from_one("judgement_id_from_one")]
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["status", "created_at"], name="judgement_status_created_idx"),
            models.Index(fields=["creator", "-created_at"], name="judgement_creator_created_idx"),
            models.Index(fields=["status", "lease_expires_at"], name="judgement_lease_idx"),
            models.Index(fields=["contested", "-created_at"], name="judgement_contested_idx"),
        ]
        permissions = [("override_judgement", "Can override the panel's verdict")]

    def __str__(self) -> str:
        return f"{self.title} ({self.get_status_display()})"

    def get_absolute_url(self) -> str:
        return reverse("judgement-detail", args=[self.pk])

    def hide(self, hidden: bool = True) -> None:
        """Take it out of the history list (or put it back); nothing else changes."""
        self.hidden_at = timezone.now() if hidden else None
        Judgement.objects.filter(pk=self.pk).update(hidden_at=self.hidden_at)

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    @property
    def decision(self) -> str | None:
        """The overall decision, when there is one."""
        return DECISION_OF_STATUS.get(self.status)

    @property
    def duration(self) -> timedelta | None:
        if self.started_at and self.finished_at:
            return self.finished_at - self.started_at
        return None

    @property
    def override_or_none(self) -> "Override | None":
        try:
            return self.override
        except Override.DoesNotExist:
            return None

    @property
    def confirmation_or_none(self) -> "Confirmation | None":
        try:
            return self.confirmation
        except Confirmation.DoesNotExist:
            return None

    @property
    def reviewed(self) -> bool:
        """A person confirmed or overrode the panel's verdict."""
        return self.override_or_none is not None or self.confirmation_or_none is not None

    @property
    def is_held(self) -> bool:
        """Contested and asked to be held (or of unmeasured trust and asked to hold that),
        and no person has decided yet."""
        decided = self.status in (Status.APPROVED, Status.REJECTED) and not self.escalated
        asked = (self.contested and self.hold_contested) or (
            self.trust == Trust.UNMEASURED and self.hold_unmeasured
        )
        return bool(decided and asked and not self.reviewed)

    @property
    def next_level(self) -> "Judgement | None":
        """The level its verdict escalated to, once started."""
        try:
            return self.escalation
        except Judgement.DoesNotExist:
            return None

    def story(self) -> list["Judgement"]:
        """Every level of its escalation story, the first first (itself alone when it
        never escalated): what the answers, the webhooks, the receipt and the pages list.
        One query for the levels below the root."""
        root = self if self.root_id is None else self.root
        if root is None:
            return [self]
        later = Judgement.objects.filter(root=root).select_related("panel").order_by("level")
        return [root, *later]

    def in_force(self) -> "Judgement":
        """The level whose verdict is in force: the first that did not escalate (itself,
        unless it escalated). A level that escalated without a next level is a story cut
        short; it answers itself, and `verdict` says it is not decided."""
        level: Judgement = self
        while level.escalated:
            following = level.next_level
            if following is None:
                return level
            level = following
        return level

    @property
    def verdict(self) -> str:
        """The status in force: the next level's verdict when this one escalated (still
        idle or judging while it runs: fail-closed); a human override's decision; "held"
        while a contested verdict waits for a person; else the panel's status."""
        if self.escalated:
            following = self.in_force()
            # Escalated with no level after it: nothing decided, never an approval.
            return Status.JUDGING if following.escalated else following.verdict
        override = self.override_or_none
        if override is not None:
            return override.verdict
        if self.is_held:
            return Status.HELD
        return self.status

    @property
    def verdict_decision(self) -> str | None:
        """approve or reject as the verdict in force says; None while there is none."""
        return DECISION_OF_STATUS.get(self.verdict)

    def get_verdict_display(self) -> str:
        return Status(self.verdict).label

    def vote_changes(self) -> dict[tuple[int, int], rules.VoteChange]:
        """How each vote relates to the round before (rules.vote_changes), by (agent id,
        round). Read from the agents and decisions prefetched with the judgement, when they
        are: a change compares an agent's vote with the other agents' votes."""
        agents = list(self.agents.all())
        decisions = [agent.ordered_decisions() for agent in agents]
        changes = rules.vote_changes([[d.decision for d in votes] for votes in decisions])
        return {
            (agent.pk, decision.round): change
            for agent, votes, agent_changes in zip(agents, decisions, changes, strict=True)
            for decision, change in zip(votes, agent_changes, strict=True)
        }

    def reviewable_by(self, user: "User") -> bool:
        """The row-level twin of JudgementQuerySet.reviewable_by."""
        return self.review_refusal(user) is None

    def review_refusal(self, user: "User") -> ReviewRefusal | None:
        """Why `user` may not confirm or override it (None: they may), so that a refusal
        can say so: four eyes (they started it, on a four-eyes panel), or not a reviewer
        (policy.review_refusal)."""
        return policy.review_refusal(self, user)

    def visible_to(self, user: "User") -> bool:
        """The row-level twin of JudgementQuerySet.visible_to."""
        return policy.may_use(user, self.creator_id, self.team_id)
