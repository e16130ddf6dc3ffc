"""The calls beside the vote (judgements/core/check_prompts.py), each stored as the audited
call it was and what it found: a confidence probe per agent, a second opinion, an injection
screen. None of them is a vote."""

from django.db import models
from django.utils import timezone

from judgements.models.choices import Decision


class CheckKind(models.TextChoices):
    PROBE = "probe", "Confidence probe"
    SECOND_OPINION = "second_opinion", "Second opinion"
    SCREEN = "screen", "Injection screen"


class JudgementCheck(models.Model):
    """One check of a judgement: the successful call as sent and answered (failed
    attempts too, with `error` set) and its finding."""

    judgement = models.ForeignKey(
        "judgements.Judgement", on_delete=models.CASCADE, related_name="checks"
    )
    kind = models.CharField(max_length=16, choices=CheckKind.choices)
    # The agent a probe asks; None for the judgement-wide checks.
    agent = models.ForeignKey(
        "judgements.Agent", null=True, blank=True, on_delete=models.CASCADE, related_name="probes"
    )
    attempt = models.PositiveSmallIntegerField(default=1)
    model = models.CharField(max_length=200)
    provider = models.CharField(max_length=100)
    base_url = models.CharField(max_length=500, blank=True)
    request = models.JSONField(help_text="The request body: messages and parameters.")
    response_text = models.TextField(blank=True)
    error = models.TextField(blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    cached_tokens = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    # What it found. A probe and a second opinion: P(approve) from the reply's
    # log-probabilities (None: unknown). A second opinion: its decision. A screen: whether
    # the content steered the model (None: the call failed, so nobody knows).
    p_approve = models.FloatField(null=True, blank=True)
    decision = models.CharField(  # noqa: DJ001 - None: no decision (a probe, a screen, an error)
        max_length=8, choices=Decision.choices, null=True, blank=True
    )
    steered = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["judgement", "kind", "agent__position", "attempt", "id"]
        indexes = [models.Index(fields=["judgement", "kind"], name="check_judgement_kind_idx")]

    def __str__(self) -> str:
        who = f" of {self.agent.name}" if self.agent is not None else ""
        state = "failed" if self.error else "done"
        return f"{self.get_kind_display()}{who}, attempt {self.attempt}: {state}"

    @property
    def ok(self) -> bool:
        return not self.error
