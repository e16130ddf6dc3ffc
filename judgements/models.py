import base64
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import models, transaction
from django.urls import reverse
from django.utils import timezone

# As `marks`: a judgement's `contested` field would shadow the module in its class body.
from judgements import contested as marks
from judgements import rules, text


class Status(models.TextChoices):
    IDLE = "idle", "Idle"
    JUDGING = "judging", "Judging"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    ERROR = "error", "Error"
    # Never a panel's status: the verdict in force of a contested judgement whose case
    # asked to hold it until a person confirms or overrides it (Judgement.verdict).
    HELD = "held", "Held for review"


class Decision(models.TextChoices):
    APPROVE = rules.Vote.APPROVE.value, "Approve"
    REJECT = rules.Vote.REJECT.value, "Reject"


# The decision an approved or rejected status stands for.
DECISION_OF_STATUS = {Status.APPROVED: Decision.APPROVE, Status.REJECTED: Decision.REJECT}


FINISHED_STATUSES = (Status.APPROVED, Status.REJECTED, Status.ERROR)


def lease_expired(now) -> models.Q:
    """Nobody holds the judgement: its worker stopped renewing (or never took a lease)."""
    return models.Q(lease_expires_at__lt=now) | models.Q(lease_expires_at__isnull=True)


class JudgementQuerySet(models.QuerySet):
    """Who may work on which judgement: the lease and status queries of the engine."""

    def claimable(self, now) -> "JudgementQuerySet":
        """Queued judgements, and started ones nobody holds whose time is not up (those
        past their deadline are expired instead, see `overdue`)."""
        deadline = now - timedelta(seconds=settings.MAGI_JUDGEMENT_TIMEOUT)
        return self.filter(
            models.Q(status=Status.IDLE)
            | (
                models.Q(status=Status.JUDGING)
                & lease_expired(now)
                & (models.Q(started_at__isnull=True) | models.Q(started_at__gte=deadline))
            )
        )

    def overdue(self, now) -> "JudgementQuerySet":
        """Started judgements nobody holds whose time is up: resuming could not finish."""
        deadline = now - timedelta(seconds=settings.MAGI_JUDGEMENT_TIMEOUT)
        return self.filter(lease_expired(now), status=Status.JUDGING, started_at__lt=deadline)

    def held_by(self, worker_id: str) -> "JudgementQuerySet":
        return self.filter(status=Status.JUDGING, lease_owner=worker_id)

    # Who sees which, and the review state, as Judgement.visible_to, .reviewed and
    # .is_held say them for one judgement: the history list, the review queue and the API
    # ask the database the same questions.

    def visible_to(self, user) -> "JudgementQuerySet":
        return self if user.is_staff else self.filter(creator=user)

    def unreviewed(self) -> "JudgementQuerySet":
        return self.filter(UNREVIEWED)


# No person has confirmed or overridden it: `not Judgement.reviewed` as a condition.
UNREVIEWED = models.Q(override__isnull=True, confirmation__isnull=True)


def held() -> models.Q:
    """Judgement.is_held as a condition: decided, contested, asked to be held, and no
    person has confirmed or overridden it."""
    decided = models.Q(status__in=[Status.APPROVED, Status.REJECTED])
    return decided & models.Q(contested=True, hold_contested=True) & UNREVIEWED


@dataclass(frozen=True)
class QueuedAhead:
    people: int
    runs: int


class Judgement(models.Model):
    title = models.CharField(max_length=200)
    content = models.TextField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.IDLE)
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
    # lease it keeps renewing; an expired lease lets another worker resume the work.
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    # The API token that started it, for the per-token rate limit (judgements/limits.py).
    api_token = models.ForeignKey(
        "ApiToken", null=True, blank=True, on_delete=models.SET_NULL, related_name="judgements"
    )
    # Where its end (and any override) is POSTed, signed (judgements/webhooks.py). None:
    # no webhook, which an empty string would blur with a bad URL.
    callback_url = models.CharField(max_length=2000, null=True, blank=True)  # noqa: DJ001
    # The saved panel it started from, if any. Its agents are copied into Agent rows, so
    # editing the panel later changes no judgement.
    panel = models.ForeignKey(
        "Panel", null=True, blank=True, on_delete=models.SET_NULL, related_name="judgements"
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
    # The contested mark (judgements/contested.py), stored with the panel's verdict: None
    # until the judgement is decided. `contest_reasons` says why in words (the counted
    # signals); `contest_signals` names every kind that fired, counted or not.
    contested = models.BooleanField(null=True, blank=True)
    contest_reasons = models.JSONField(default=list, blank=True)
    contest_signals = models.JSONField(default=list, blank=True)
    # Asked at submit (the case, its saved panel or MAGI_HOLD_CONTESTED): a contested
    # verdict is held until a person confirms or overrides it.
    hold_contested = models.BooleanField(default=False)
    # Hidden from its owner's history list (judgements/history.py), never deleted: the
    # audit, the admin and the API keep it.
    hidden_at = models.DateTimeField(null=True, blank=True)

    objects = JudgementQuerySet.as_manager()

    class Meta:
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

    def queued_ahead(self) -> "QueuedAhead":
        """The queued judgements a worker starts before this one (people's first, then
        evaluation runs' in order: judgements/runner.py), for the page to say why it waits."""
        idle = Judgement.objects.filter(status=Status.IDLE).exclude(pk=self.pk)
        earlier = idle.filter(
            models.Q(created_at__lt=self.created_at)
            | models.Q(created_at=self.created_at, pk__lt=self.pk)
        )
        people = idle.filter(evaluation_run__isnull=True)
        if self.evaluation_run_id is None:
            return QueuedAhead(people=earlier.filter(evaluation_run__isnull=True).count(), runs=0)
        runs = earlier.filter(evaluation_run__isnull=False)
        return QueuedAhead(people=people.count(), runs=runs.count())

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    @property
    def decision(self) -> str | None:
        """The overall decision, when there is one."""
        return DECISION_OF_STATUS.get(self.status)

    @property
    def duration(self):
        if self.started_at and self.finished_at:
            return self.finished_at - self.started_at
        return None

    @classmethod
    def create_with_agents(cls, case: dict, creator=None, api_token=None) -> "Judgement":
        """Store a validated case (see forms.validate_case) as a queued judgement.

        Limits on who may start how many apply before this: see limits.create_judgement.
        """
        with transaction.atomic():
            judgement = cls.objects.create(
                title=case["title"],
                content=case["content"],
                creator=creator,
                api_token=api_token,
                callback_url=case.get("callback_url"),
                # The saved panel it started from (judgements/saved_panels.py), if any.
                panel=case.get("panel"),
                hold_contested=hold_contested(case),
            )
            Agent.objects.bulk_create(Agent.rows_for(judgement.pk, case["agents"]))
        return judgement

    def token_totals(self) -> dict[str, int | None]:
        """Prompt, cached and completion tokens over every attempt (None: never reported)."""
        return LLMAttempt.objects.filter(agent__judgement=self).aggregate(
            prompt=models.Sum("prompt_tokens"),
            cached=models.Sum("cached_tokens"),
            completion=models.Sum("completion_tokens"),
        )

    def as_case(self) -> dict:
        """The inputs, in the shape the forms take: for "Run again"."""
        return {
            "title": self.title,
            "content": self.content,
            "agents": [
                {"name": a.name, "model": a.model, "criteria": a.criteria}
                for a in self.agents.all()
            ],
        }

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
        """Contested, asked to be held, and no person has decided yet."""
        decided = self.status in (Status.APPROVED, Status.REJECTED)
        return bool(decided and self.contested and self.hold_contested and not self.reviewed)

    @property
    def verdict(self) -> str:
        """The status in force: a human override's decision; "held" while a contested
        verdict waits for a person; else the panel's status."""
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

    def contest_record(self) -> list[marks.AgentRecord]:
        """The panel's record as contested.assess reads it: each agent's stored answers,
        with how many attempts each took and whether a check asked it again."""
        attempts: dict[tuple[int, int], list[str]] = {}
        for agent_id, round_number, outcome in LLMAttempt.objects.filter(
            agent__judgement=self
        ).values_list("agent_id", "round", "outcome"):
            attempts.setdefault((agent_id, round_number), []).append(outcome)
        records = []
        for agent in self.agents.all():
            answers = []
            for decision in agent.ordered_decisions():
                outcomes = attempts.get((agent.pk, decision.round), [])
                answers.append(
                    marks.Answer(
                        round=decision.round,
                        decision=decision.decision,
                        reason=decision.reason,
                        missing=tuple(decision.missing),
                        attempts=max(1, sum(o != AttemptOutcome.RECHECKED for o in outcomes)),
                        rechecked=AttemptOutcome.RECHECKED in outcomes,
                    )
                )
            records.append(marks.AgentRecord(agent.name, tuple(answers)))
        return records

    def assess(self) -> marks.Contest:
        return marks.assess(self.content, self.contest_record())

    def get_verdict_display(self) -> str:
        return Status(self.verdict).label

    def as_result(self) -> dict:
        """The judgement as the command line and the HTTP API report it. "status" is the
        verdict in force, "panel_status" what the panel decided (they differ only after a
        human override)."""
        override = self.override_or_none
        changes = self.vote_changes()
        return {
            "id": self.pk,
            "title": self.title,
            "status": self.verdict,
            "panel_status": self.status,
            "contested": self.contested,
            "contest_reasons": list(self.contest_reasons),
            "hold_contested": self.hold_contested,
            "override": None if override is None else override.as_result(),
            "confirmation": None
            if (confirmation := self.confirmation_or_none) is None
            else confirmation.as_result(),
            "error": self.error_message or None,
            "panel": None if self.panel is None else {"id": self.panel.pk, "name": self.panel.name},
            "agents": [agent.as_result(changes) for agent in self.agents.all()],
        }

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

    def visible_to(self, user) -> bool:
        return user.is_staff or (self.creator_id is not None and self.creator_id == user.pk)


def hold_contested(case: dict) -> bool:
    """Whether a contested verdict of this case is held for a person: the case's own
    "hold_contested" when it says, else its saved panel's, else the deployment's default."""
    if case.get("hold_contested") is not None:
        return bool(case["hold_contested"])
    panel = case.get("panel")
    if panel is not None and panel.hold_contested is not None:
        return bool(panel.hold_contested)
    return bool(settings.MAGI_HOLD_CONTESTED)


def group_name_for(judgement_id: int) -> str:
    return f"judgement-{judgement_id}"


class Agent(models.Model):
    judgement = models.ForeignKey(Judgement, on_delete=models.CASCADE, related_name="agents")
    position = models.PositiveSmallIntegerField()
    name = models.CharField(max_length=100)
    # The name as compared for uniqueness, computed in Python (text.name_key) so the
    # form's check and the database's constraint agree on every database: Lower() in SQL
    # folds case differently from Python ("İnci" and "inci" on PostgreSQL).
    name_key = models.CharField(max_length=64, editable=False)
    model = models.CharField(max_length=200)
    criteria = models.TextField()
    final_score_tenths = models.PositiveSmallIntegerField(null=True, blank=True)
    # None means "not decided yet", which an empty string would blur with a decision.
    final_decision = models.CharField(  # noqa: DJ001
        max_length=8, choices=Decision.choices, null=True, blank=True
    )

    class Meta:
        ordering = ["judgement", "position"]
        constraints = [
            models.UniqueConstraint(fields=["judgement", "position"], name="agent_unique_position"),
            models.UniqueConstraint(
                fields=["judgement", "name_key"], name="agent_unique_name_key_per_judgement"
            ),
            models.CheckConstraint(
                condition=models.Q(position__gte=1, position__lte=rules.PANEL_SIZE),
                name="agent_position_in_range",
            ),
            models.CheckConstraint(
                condition=models.Q(final_score_tenths__isnull=True)
                | models.Q(final_score_tenths__gte=0, final_score_tenths__lte=10),
                name="agent_final_score_in_range",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    @staticmethod
    def rows_for(judgement_id: int, agents: list[dict]) -> list["Agent"]:
        """Unsaved rows for a judgement's validated agents, in panel order."""
        return [
            Agent(
                judgement_id=judgement_id,
                position=position,
                name=agent["name"],
                name_key=text.name_key(agent["name"]),
                model=agent["model"],
                criteria=agent["criteria"],
            )
            for position, agent in enumerate(agents, start=1)
        ]

    @property
    def final_score(self) -> float | None:
        if self.final_score_tenths is None:
            return None
        return rules.tenths_as_float(self.final_score_tenths)

    def ordered_decisions(self) -> list["RoundDecision"]:
        # Sorted in Python so a prefetch of decisions is used, not a new query.
        return sorted(self.decisions.all(), key=lambda d: d.round)

    def votes(self) -> list[str]:
        return [d.decision for d in self.ordered_decisions()]

    def score_tenths(self) -> int:
        return rules.score_tenths(self.votes())

    def as_result(self, changes: dict[tuple[int, int], rules.VoteChange]) -> dict:
        """`changes`: the judgement's vote changes (Judgement.vote_changes), which need the
        other agents' votes."""
        return {
            "name": self.name,
            "model": self.model,
            "final_decision": self.final_decision,
            "score": rules.tenths_as_float(self.score_tenths()),
            "rounds": [
                {
                    "round": d.round,
                    "decision": d.decision,
                    "reason": d.reason,
                    "changed": changes[self.pk, d.round].changed,
                    "with_majority": changes[self.pk, d.round].with_majority,
                }
                for d in self.ordered_decisions()
            ],
        }


class RoundDecision(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="decisions")
    round = models.PositiveSmallIntegerField()
    decision = models.CharField(max_length=8, choices=Decision.choices)
    reason = models.TextField()
    latency_ms = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    # Of the prompt tokens, those the provider served from its prompt cache, when it says.
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    # What the answer says the content lacks, as the model wrote it (AgentVerdict.missing).
    missing = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["agent__position", "round"]
        constraints = [
            models.UniqueConstraint(fields=["agent", "round"], name="decision_unique_per_round"),
            models.CheckConstraint(
                condition=models.Q(round__gte=1, round__lte=rules.ROUNDS),
                name="decision_round_in_range",
            ),
            models.CheckConstraint(
                condition=models.Q(decision__in=Decision.values),
                name="decision_is_approve_or_reject",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.agent.name}, round {self.round}: {self.decision}"


class AttemptOutcome(models.TextChoices):
    OK = "ok", "OK"
    FAILED = "failed", "Failed"
    # A valid answer a check found wanting (judgements/answer_checks.py): the agent was
    # asked once more, and the next attempt's answer is the stored decision.
    RECHECKED = "rechecked", "Asked again after a check"


class LLMAttempt(models.Model):
    """Every chat completion attempt exactly as sent and as answered, for the audit."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="attempts")
    round = models.PositiveSmallIntegerField()
    attempt = models.PositiveSmallIntegerField()
    model = models.CharField(max_length=200)
    provider = models.CharField(max_length=100)
    base_url = models.CharField(max_length=500, blank=True)
    request = models.JSONField(help_text="The request body: messages and parameters.")
    response_text = models.TextField(blank=True)
    error = models.TextField(blank=True)
    outcome = models.CharField(max_length=16, choices=AttemptOutcome.choices)
    duration_ms = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["agent__position", "round", "attempt", "id"]
        indexes = [models.Index(fields=["agent", "round"], name="attempt_agent_round_idx")]

    def __str__(self) -> str:
        return f"{self.agent.name}, round {self.round}, attempt {self.attempt}: {self.outcome}"


class ApiToken(models.Model):
    """A bearer token for programs that call the HTTP API. Only a hash is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=8, help_text="The first characters, to tell tokens apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # Revoked tokens stay, so the judgements they started keep saying which it was.
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"], name="apitoken_user_created_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) for {self.user}"

    @staticmethod
    def hash(key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    @classmethod
    def issue(cls, user, name: str) -> tuple["ApiToken", str]:
        """Create a token; the key is returned once and never stored."""
        key = "magi_" + secrets.token_urlsafe(32)
        token = cls.objects.create(user=user, name=name, prefix=key[5:13], key_hash=cls.hash(key))
        return token, key

    def revoke(self) -> bool:
        """Stop the token working from now on. False if it was revoked before."""
        self.revoked_at = timezone.now()
        return bool(
            ApiToken.objects.filter(pk=self.pk, revoked_at__isnull=True).update(
                revoked_at=self.revoked_at
            )
        )

    @classmethod
    def user_for(cls, key: str):
        token = cls.active(key)
        return None if token is None else token.user

    @classmethod
    def active(cls, key: str) -> "ApiToken | None":
        """The token with this key, if its user may still sign in; notes its use."""
        token = cls.objects.select_related("user").filter(key_hash=cls.hash(key)).first()
        if token is None or token.revoked_at is not None or not token.user.is_active:
            return None
        now = timezone.now()
        # At most one write a minute: a burst of requests must not queue on the write lock.
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            cls.objects.filter(pk=token.pk).update(last_used_at=now)
        return token


LAST_USED_RESOLUTION = timedelta(minutes=1)


class IdempotencyKey(models.Model):
    """A client's Idempotency-Key on POST /api/judgements/: the same key and body from the
    same user answer with the judgement it started (judgements/idempotency.py). The unique
    constraint, not any process's memory, makes two concurrent requests start one."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    key = models.CharField(max_length=255)
    body_hash = models.CharField(max_length=64, help_text="SHA-256 of the canonical JSON body.")
    judgement = models.ForeignKey(
        Judgement, on_delete=models.CASCADE, related_name="idempotency_keys"
    )
    status_code = models.PositiveSmallIntegerField(default=201)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["user", "key"], name="idempotency_unique_user_key"),
        ]
        indexes = [models.Index(fields=["created_at"], name="idempotency_created_idx")]

    def __str__(self) -> str:
        return f"{self.key!r} of {self.user_id} -> judgement {self.judgement_id}"


class Override(models.Model):
    """A human's verdict over the panel's, with the reason: the audit of who overrode what.
    One per judgement (a second is refused); never edited or deleted (judgements/overrides.py)."""

    judgement = models.OneToOneField(Judgement, on_delete=models.CASCADE, related_name="override")
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="overrides"
    )
    at = models.DateTimeField(default=timezone.now)
    # What the panel had decided when it was overridden, and the decision put in force.
    panel_status = models.CharField(max_length=16, choices=Status.choices)
    decision = models.CharField(max_length=8, choices=Decision.choices)
    reason = models.TextField()

    class Meta:
        ordering = ["-at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(decision__in=Decision.values),
                name="override_is_approve_or_reject",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.judgement_id}: {self.panel_status} -> {self.decision} by {self.by}"

    @property
    def verdict(self) -> str:
        return Status.APPROVED if self.decision == Decision.APPROVE else Status.REJECTED

    def as_result(self) -> dict:
        return {
            "by": self.by.get_username(),
            "at": self.at.isoformat(),
            "reason": self.reason,
            "decision": self.decision,
        }


class Confirmation(models.Model):
    """A person's review that keeps the panel's verdict, with the reason: audited like an
    override (who, when, why), one per judgement, never edited (judgements/reviews.py)."""

    judgement = models.OneToOneField(
        Judgement, on_delete=models.CASCADE, related_name="confirmation"
    )
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="confirmations"
    )
    at = models.DateTimeField(default=timezone.now)
    panel_status = models.CharField(max_length=16, choices=Status.choices)
    reason = models.TextField()

    class Meta:
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.judgement_id}: {self.panel_status} confirmed by {self.by}"

    @property
    def decision(self) -> str:
        # Only an approved or rejected verdict can be confirmed (judgements/reviews.py).
        return DECISION_OF_STATUS[self.panel_status]

    def get_decision_display(self) -> str:
        return Decision(self.decision).label

    def as_result(self) -> dict:
        return {
            "by": self.by.get_username(),
            "at": self.at.isoformat(),
            "reason": self.reason,
            "decision": self.decision,
        }


class WebhookSecret(models.Model):
    """A user's key for signing webhooks (Standard Webhooks: `whsec_` + base64 of 32
    random bytes). Kept in clear, as HMAC needs it; shown once by `manage.py
    webhook_secret`, replaced by its --rotate."""

    PREFIX = "whsec_"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_secret"
    )
    secret = models.CharField(max_length=100)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"webhook secret of {self.user} ({self.created_at:%Y-%m-%d})"

    @classmethod
    def new_secret(cls) -> str:
        return cls.PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()

    @classmethod
    def issue(cls, user) -> str:
        """A new secret for the user, replacing any earlier one; returned once."""
        secret = cls.new_secret()
        cls.objects.update_or_create(
            user=user, defaults={"secret": secret, "created_at": timezone.now()}
        )
        return secret

    def key(self) -> bytes:
        """The bytes the HMAC is keyed with: the secret's base64 part, decoded."""
        return base64.b64decode(self.secret.removeprefix(self.PREFIX))


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"


class WebhookDelivery(models.Model):
    """One event to POST to a judgement's callback_url, stored in the transaction that
    changed the judgement, retried until delivered or out of attempts. Its id is the
    `webhook-id` header, the same on every attempt so a receiver can drop duplicates."""

    judgement = models.ForeignKey(
        Judgement, on_delete=models.CASCADE, related_name="webhook_deliveries"
    )
    event = models.CharField(max_length=40)
    url = models.CharField(max_length=2000)
    payload = models.JSONField()
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempt_count = models.PositiveSmallIntegerField(default=0)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    # Like a judgement's: the worker posting it holds a lease; a dead worker's expires.
    lease_owner = models.CharField(max_length=100, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "webhook deliveries"
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due_idx"),
        ]

    def __str__(self) -> str:
        return f"msg_{self.pk} {self.event} for judgement {self.judgement_id}: {self.status}"

    @property
    def webhook_id(self) -> str:
        return f"msg_{self.pk}"


class WebhookAttempt(models.Model):
    """One POST of a delivery, as it went: for the admin's audit."""

    delivery = models.ForeignKey(WebhookDelivery, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveSmallIntegerField()
    worker = models.CharField(max_length=100, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["delivery", "number", "id"]

    def __str__(self) -> str:
        return f"{self.delivery.webhook_id} attempt {self.number}: {self.status_code or self.error}"


class SharedQuerySet(models.QuerySet):
    """Panels and suites: each user's own, and the examples shipped with MAGI (no owner)."""

    def visible_to(self, user) -> "SharedQuerySet":
        """What the user may use: their own and the examples; staff, and the operator's
        command line (user None), everything."""
        if user is None or user.is_staff:
            return self
        return self.filter(models.Q(owner=user) | models.Q(owner__isnull=True))


class SharedWithExamples(models.Model):
    """What panels and suites share: a name unique per owner, and an owner that is a user
    or none (an example shipped with MAGI, unique by name among the examples)."""

    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # Each model declares its own `owner` (a nullable foreign key to the user) so that its
    # related_name is spelled out ("panels", "suites"): "%(class)ss" here would be recorded
    # literally by migrations and need a migration of its own.

    objects = SharedQuerySet.as_manager()

    class Meta:
        abstract = True
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "name"], name="%(class)s_unique_name_per_owner"
            ),
            models.UniqueConstraint(
                fields=["name"],
                condition=models.Q(owner__isnull=True),
                name="%(class)s_unique_example_name",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def visible_to(self, user) -> bool:
        """The row-level twin of SharedQuerySet.visible_to."""
        return user.is_staff or self.owner_id is None or self.owner_id == user.pk


class Panel(SharedWithExamples):
    """A saved set of three agents to start judgements and evaluation runs from. Owned by
    a user; an example panel (shipped with MAGI, judgements/examples.py) has no owner and
    is visible to everyone. Agents are stored as validated JSON, in the shape a case's
    "agents" takes."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="panels",
    )
    agents = models.JSONField(help_text='Three {"name", "model", "criteria"} objects.')
    # Hold contested verdicts of judgements started from it for a person; None: the
    # deployment's MAGI_HOLD_CONTESTED decides.
    hold_contested = models.BooleanField(null=True, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    def get_absolute_url(self) -> str:
        return reverse("panel-edit", args=[self.pk])

    def editable_by(self, user) -> bool:
        return user.is_staff or (self.owner_id is not None and self.owner_id == user.pk)


class Suite(SharedWithExamples):
    """A named list of labelled cases to evaluate panels on (judgements/suites.py reads
    and writes them as JSONL). Owned like a panel: no owner means shipped with MAGI."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="suites",
    )


class SuiteCase(models.Model):
    """One labelled case: the content, the right panel verdict and, optionally, the right
    final decision of each agent in order."""

    suite = models.ForeignKey(Suite, on_delete=models.CASCADE, related_name="cases")
    position = models.PositiveIntegerField()
    case_id = models.CharField(max_length=100, help_text='The case\'s "id" in the JSONL.')
    title = models.CharField(max_length=200, blank=True)
    content = models.TextField()
    expected = models.CharField(max_length=8, choices=Decision.choices)
    expected_agents = models.JSONField(null=True, blank=True)
    tags = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["suite", "position"]
        constraints = [
            models.UniqueConstraint(fields=["suite", "case_id"], name="suitecase_unique_id"),
            models.UniqueConstraint(fields=["suite", "position"], name="suitecase_unique_position"),
        ]

    def __str__(self) -> str:
        return f"{self.suite.name}/{self.case_id}"


class EvaluationRun(models.Model):
    """A panel run over a suite, each case `repeats` times, as ordinary judgements linked
    to the run (Judgement.evaluation_run). The run is finished when they all are; the
    report is computed from them (judgements/evaluations.py), never stored apart."""

    panel = models.ForeignKey(
        Panel, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )
    # The panel as it ran: a panel edited or deleted later changes no run.
    panel_name = models.CharField(max_length=100)
    agents = models.JSONField()
    suite = models.ForeignKey(Suite, on_delete=models.PROTECT, related_name="runs")
    repeats = models.PositiveSmallIntegerField(default=1)
    creator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="evaluation_runs",
    )
    created_at = models.DateTimeField(default=timezone.now)
    # Set by a cancel (transitions.cancel_run): its unfinished judgements ended in error.
    cancelled_at = models.DateTimeField(null=True, blank=True)
    cancelled_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["suite", "-created_at"], name="run_suite_created_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.panel_name} on {self.suite.name} (run {self.pk})"

    def get_absolute_url(self) -> str:
        return reverse("evaluation-run", args=[self.pk])

    def visible_to(self, user) -> bool:
        return user.is_staff or (self.creator_id is not None and self.creator_id == user.pk)
