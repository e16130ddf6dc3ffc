"""What the panel did: its three agents, each round's decisions, every LLM call tried."""

from django.db import models
from django.utils import timezone

# As `marks`: a judgement's `contested` field would shadow the module in its class body.
from judgements.core import rules
from judgements.models.choices import Decision, ids_from_one


class Agent(models.Model):
    judgement = models.ForeignKey(
        "judgements.Judgement", on_delete=models.CASCADE, related_name="agents"
    )
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
    final_decision = models.CharField(  # noqa: DJ001 - None until decided
        max_length=8, choices=Decision.choices, null=True, blank=True
    )

    class Meta:
        ordering = ["judgement", "position"]
        constraints = [
            ids_from_one("agent_id_from_one"),
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
    # The agent's own confidence: P(approve) at the decision, from the reply's token
    # log-probabilities (judgements/core/confidence.py); None: the provider gave none.
    p_approve = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["agent__position", "round"]
        constraints = [
            ids_from_one("round_decision_id_from_one"),
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
    # A valid answer a check found wanting (judgements/core/answer_checks.py): the agent was
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
        constraints = [ids_from_one("llm_attempt_id_from_one")]
        ordering = ["agent__position", "round", "attempt", "id"]
        indexes = [models.Index(fields=["agent", "round"], name="attempt_agent_round_idx")]

    def __str__(self) -> str:
        return f"{self.agent.name}, round {self.round}, attempt {self.attempt}: {self.outcome}"
