"""A panel's certificate: the rule under which its verdicts say "Not contested", chosen on
labelled evaluation runs with a stated bound on the accuracy of what it keeps
(judgements/core/certificate.py computes it, judgements/evaluations/certify.py stores it).
Valid only for exactly the agents it was measured on, asked with the same prompt variants."""

import hashlib
import json
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.db import models
from django.utils import timezone

from judgements.core import kept_verdicts
from judgements.models.choices import ids_from_one


def agents_fingerprint(agents: Iterable[Mapping[str, object]], variants: Iterable[str] = ()) -> str:
    """The agents' models and criteria, in panel order, and the prompt variants they are
    asked with (judgements/core/prompt_variants.py), as one hash: a certificate holds
    for these and no others (names are labels, not part of what was
    measured). Without variants it is the hash of the agents alone, as it was before
    variants existed, so what was measured then stays valid for the prompts it measured."""
    key: list[object] = [[agent["model"], agent["criteria"]] for agent in agents]
    chosen = sorted({str(variant) for variant in variants})
    if chosen:
        key = [key, {"prompt_variants": chosen}]
    return hashlib.sha256(json.dumps(key, ensure_ascii=False).encode()).hexdigest()


VOID_REASON = (
    "An agent's model or criteria, or the panel's prompt variants, changed after it was measured."
)
RECALIBRATED_REASON = (
    "The panel's calibration, which its calibrated decisions read, was learned again after "
    "it was measured."
)


class CertificateQuerySet(models.QuerySet["Certificate"]):
    def in_force(self, fingerprint: str) -> "CertificateQuerySet":
        """The newest certificate measured on exactly these agents and not voided, if it
        certified a rule. A newer one that certified nothing takes an older one's place:
        a failed recertification stops vouching, it does not fall back on the last
        success."""
        newest = (
            self.filter(voided_at__isnull=True, fingerprint=fingerprint)
            .order_by("-created_at", "-id")
            .values("pk")[:1]
        )
        return self.filter(pk__in=models.Subquery(newest), certified=True)

    def void_unless(self, fingerprint: str) -> list[int]:
        """Void the certificates measured on other agents or prompt variants than these (a
        panel's agents changed model or criteria, or its variants changed): kept for the
        audit, never in force again. Returns the ids of those it voided, for the answer
        that says so."""
        return self.exclude(fingerprint=fingerprint).void(VOID_REASON)

    def void(self, reason: str) -> list[int]:
        """Void these certificates, those not void already, for `reason`; their ids."""
        voiding = self.filter(voided_at__isnull=True)
        ids = sorted(voiding.values_list("pk", flat=True))
        self.filter(pk__in=ids).update(voided_at=timezone.now(), void_reason=reason)
        return ids


class Certificate(models.Model):
    panel = models.ForeignKey(
        "judgements.Panel", on_delete=models.CASCADE, related_name="certificates"
    )
    created_at = models.DateTimeField(default=timezone.now)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The agents as measured, and their fingerprint with the variants they were asked with
    # (agents_fingerprint; the variants are the measured runs' prompt_variants).
    agents = models.JSONField()
    fingerprint = models.CharField(max_length=64)
    # What it was measured on: the runs, and each suite with the case ids it held.
    runs = models.JSONField(default=list)
    suites = models.JSONField(default=list)
    target = models.FloatField()
    delta = models.FloatField()
    samples = models.PositiveIntegerField()
    # How the rule was chosen and tested (judgements/core/certificate.py's METHOD): the
    # split by key (seed, share, which verdicts chose and which tested) and every step of
    # the fixed sequence on the test part, so anyone can recompute it.
    method = models.CharField(max_length=40, default="")
    split = models.JSONField(default=dict, blank=True)
    tested = models.JSONField(default=list, blank=True)
    # False: no rule reached the target; `best` says how close the first one tested came.
    certified = models.BooleanField()
    rule = models.JSONField(null=True, blank=True)
    # The certified rule on the test part: the share of it kept, the accuracy of what it
    # kept, and how many; `bound` is what is promised (the target, for this method).
    coverage = models.FloatField(null=True, blank=True)
    accuracy = models.FloatField(null=True, blank=True)
    bound = models.FloatField(null=True, blank=True)
    kept = models.PositiveIntegerField(default=0)
    best = models.JSONField(null=True, blank=True)
    curve = models.JSONField(default=list, blank=True)
    # A cascade's certificate (docs/escalation.md), stored on the story's first panel:
    # {"panels": one entry per level, in order (its panel's id and name, fingerprint and
    # rule), "report": core/cascade.py's CascadeReport}; its `fingerprint` is the chain's
    # (panels/escalation_chain.py chain_fingerprint). None for a certificate of the panel alone.
    levels = models.JSONField(null=True, blank=True)
    # Set when an agent's model or criteria, or the panel's variants, changed after it was
    # measured.
    voided_at = models.DateTimeField(null=True, blank=True)
    void_reason = models.TextField(blank=True)

    objects = CertificateQuerySet.as_manager()

    class Meta:
        constraints = [ids_from_one("certificate_id_from_one")]
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["panel", "-created_at"], name="certificate_panel_idx"),
        ]

    def __str__(self) -> str:
        state = "certified" if self.certified else "not certified"
        return f"{self.panel.name}: {state} ({self.created_at:%Y-%m-%d})"

    @property
    def the_rule(self) -> kept_verdicts.Rule | None:
        return None if self.rule is None else kept_verdicts.Rule.from_dict(self.rule)

    @property
    def test_size(self) -> int:
        """How many held-out verdicts tested the rule (one per case)."""
        return len((self.split or {}).get("test", []))

    @property
    def selection_size(self) -> int:
        return len((self.split or {}).get("selection", []))

    def describe(self) -> str:
        """The certificate in one sentence, as the pages and the API say it."""
        if self.levels is not None:
            return self.describe_cascade()
        if not self.certified or self.bound is None or self.coverage is None:
            best = (self.best or {}).get("bound")
            reached = (
                f"; the first rule tested reached a bound of {best:.1%}" if best is not None else ""
            )
            return (
                f"No rule reaches {self.target:.0%} accuracy at confidence "
                f"{1 - self.delta:.0%} on {self.samples} labelled verdicts{reached}."
            )
        rule = self.the_rule
        return (
            f"Accuracy at least {self.bound:.1%} (confidence {1 - self.delta:.0%}) on "
            f"verdicts drawn like the labelled ones, kept by "
            f"{rule.describe() if rule else 'every verdict'}: {self.kept} of the "
            f"{self.test_size} held-out verdicts it was tested on ({self.coverage:.0%}), "
            f"chosen on {self.selection_size} others."
        )

    def describe_cascade(self) -> str:
        """A cascade's certificate in one sentence (docs/escalation.md)."""
        names = " → ".join(str(p.get("name")) for p in (self.levels or {}).get("panels", []))
        if not self.certified:
            return (
                f"The cascade {names} keeps no verdict at {self.target:.0%} accuracy with "
                f"confidence {1 - self.delta:.0%} on {self.samples} labelled cases."
            )
        return (
            f"Accuracy at least {self.target:.1%} (confidence {1 - self.delta:.0%}) on the "
            f"verdicts the cascade {names} keeps, drawn like the labelled ones: "
            f"{self.kept} of the {self.test_size} held-out cases kept "
            f"({(self.coverage or 0):.0%}), the rest left for people."
        )
