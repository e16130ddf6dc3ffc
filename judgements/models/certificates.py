"""A panel's certificate: the rule under which its verdicts say "Not contested", chosen on
labelled evaluation runs with a stated bound on the accuracy of what it keeps
(judgements/core/certificate.py computes it, judgements/evaluations/certify.py stores it).
Valid only for exactly the agents it was measured on."""

import hashlib
import json
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.core import certificate as bounds


def agents_fingerprint(agents: Iterable[Mapping]) -> str:
    """The agents' models and criteria, in panel order, as one hash: a certificate holds
    for these and no others (names are labels, not part of what was measured)."""
    key = [[agent["model"], agent["criteria"]] for agent in agents]
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()


class CertificateQuerySet(models.QuerySet):
    def in_force(self, fingerprint: str) -> "CertificateQuerySet":
        """Not voided, certified, and measured on exactly these agents: newest first."""
        return self.filter(voided_at__isnull=True, certified=True, fingerprint=fingerprint)

    def void_unless(self, fingerprint: str) -> list[int]:
        """Void the certificates measured on other agents than these (a panel's agents
        changed model or criteria): kept for the audit, never in force again. Returns the
        ids of those it voided, for the answer that says so."""
        voiding = self.filter(voided_at__isnull=True).exclude(fingerprint=fingerprint)
        ids = sorted(voiding.values_list("pk", flat=True))
        self.filter(pk__in=ids).update(
            voided_at=timezone.now(),
            void_reason="An agent's model or criteria changed after it was measured.",
        )
        return ids


class Certificate(models.Model):
    panel = models.ForeignKey(
        "judgements.Panel", on_delete=models.CASCADE, related_name="certificates"
    )
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The agents as measured, and their fingerprint (agents_fingerprint).
    agents = models.JSONField()
    fingerprint = models.CharField(max_length=64)
    # What it was measured on: the runs, and each suite with the case ids it held.
    runs = models.JSONField(default=list)
    suites = models.JSONField(default=list)
    target = models.FloatField()
    delta = models.FloatField()
    samples = models.PositiveIntegerField()
    # False: no rule reached the target; `best` says how close the best one came.
    certified = models.BooleanField()
    rule = models.JSONField(null=True, blank=True)
    coverage = models.FloatField(null=True, blank=True)
    accuracy = models.FloatField(null=True, blank=True)
    bound = models.FloatField(null=True, blank=True)
    kept = models.PositiveIntegerField(default=0)
    best = models.JSONField(null=True, blank=True)
    curve = models.JSONField(default=list, blank=True)
    # Set when an agent's model or criteria changed after it was measured.
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.TextField(blank=True)

    objects = CertificateQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["panel", "-created_at"], name="certificate_panel_idx"),
        ]

    def __str__(self) -> str:
        state = "certified" if self.certified else "not certified"
        return f"{self.panel.name}: {state} ({self.created_at:%Y-%m-%d})"

    @property
    def the_rule(self) -> bounds.Rule | None:
        return None if self.rule is None else bounds.Rule.from_dict(self.rule)

    def describe(self) -> str:
        """The certificate in one sentence, as the pages and the API say it."""
        if not self.certified or self.bound is None or self.coverage is None:
            best = (self.best or {}).get("bound")
            reached = f"; the best bound reached is {best:.1%}" if best is not None else ""
            return (
                f"No rule reaches {self.target:.0%} accuracy at confidence "
                f"{1 - self.delta:.0%} on {self.samples} labelled verdicts{reached}."
            )
        rule = self.the_rule
        return (
            f"Accuracy at least {self.bound:.1%} (confidence {1 - self.delta:.0%}) on the "
            f"verdicts kept by {rule.describe() if rule else 'every verdict'}, "
            f"{self.coverage:.0%} of {self.samples} labelled verdicts."
        )
