"""The calls beside the vote (judgements/core/checks.py, one class a kind), each stored as
the audited call it was and what it found: a confidence probe per agent, a second opinion,
an injection screen, and any kind registered beside them. None of them is a vote.

Which of them a judgement asks is decided once, at submit (`checks_for`), and kept with
it (Judgement.checks_asked), so that a resumed judgement runs the same."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypedDict

from django.db import models
from django.utils import timezone

from judgements.core import checks
from judgements.core.certificate import Rule
from judgements.models.certificates import Certificate, agents_fingerprint
from judgements.models.choices import Decision, ids_from_one
from judgements.models.magi_settings import magi_settings

if TYPE_CHECKING:
    from judgements.models.panels import Panel, StoredAgent


class CheckKind(models.TextChoices):
    """The kinds MAGI ships, by name for the code that reads one of them in particular
    (the API's answer); JudgementCheck.kind takes every registered kind (`kind_choices`)."""

    PROBE = checks.Probe.kind, checks.Probe.label
    SECOND_OPINION = checks.SecondOpinion.kind, checks.SecondOpinion.label
    SCREEN = checks.Screen.kind, checks.Screen.label
    PLAIN_CRITERION = checks.PlainCriterion.kind, checks.PlainCriterion.label


def kind_choices() -> list[tuple[str, str]]:
    """Every registered kind of check: a callable, so a kind registered later is a valid
    choice with no migration."""
    return checks.kinds()


class JudgementCheck(models.Model):
    """One check of a judgement: the successful call as sent and answered (failed
    attempts too, with `error` set) and its finding."""

    judgement = models.ForeignKey(
        "judgements.Judgement", on_delete=models.CASCADE, related_name="checks"
    )
    kind = models.CharField(max_length=16, choices=kind_choices)
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
    # What it found (checks.Found). A probe and a second opinion: P(approve) from the
    # reply's log-probabilities (None: unknown). A second opinion: its decision. A screen:
    # whether the content steered the model (None: the call failed, so nobody knows); a
    # check's yes/no finding is kept in this column, whatever its kind.
    p_approve = models.FloatField(null=True, blank=True)
    decision = models.CharField(  # noqa: DJ001 - None: no decision (a probe, a screen, an error)
        max_length=8, choices=Decision.choices, null=True, blank=True
    )
    steered = models.BooleanField(null=True, blank=True)

    class Meta:
        constraints = [ids_from_one("judgement_check_id_from_one")]
        ordering = ["judgement", "kind", "agent__position", "attempt", "id"]
        indexes = [models.Index(fields=["judgement", "kind"], name="check_judgement_kind_idx")]

    def __str__(self) -> str:
        who = f" of {self.agent.name}" if self.agent is not None else ""
        state = "failed" if self.error else "done"
        return f"{self.get_kind_display()}{who}, attempt {self.attempt}: {state}"

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def found(self) -> checks.Found:
        return checks.Found(p_approve=self.p_approve, decision=self.decision, flagged=self.steered)


class FindingFields(TypedDict):
    """A finding as the columns that store it (checks.Found's flag is `steered` here)."""

    p_approve: float | None
    decision: str | None
    steered: bool | None


def finding_fields(found: checks.Found) -> FindingFields:
    """A finding as JudgementCheck's columns."""
    return {"p_approve": found.p_approve, "decision": found.decision, "steered": found.flagged}


def last_found(found: Sequence[JudgementCheck], kind: str) -> JudgementCheck | None:
    """The last successful call of a kind among `found` (in their order), if any."""
    of_kind = [check for check in found if check.kind == kind and not check.error]
    return of_kind[-1] if of_kind else None


def checks_for(
    panel: "Panel | None",
    agents: Sequence["StoredAgent"],
    evaluation: bool,
    variants: Sequence[str] = (),
    plain_call: bool = False,
    rule: Rule | None = None,
) -> list[str]:
    """The kinds of check a new judgement asks (core/checks.py `Check.runs`): as the
    deployment's setting or the saved panel says; else all in an evaluation run; else
    those the panel's certificate in force for these agents reads (or `rule`, an
    escalation level's rule under its cascade's certificate); else none."""
    if rule is None and not evaluation and panel is not None and undecided(panel):
        rule = certified_rule(panel.pk, agents, variants)
    kinds = []
    for check in checks.registered():
        asked = checks.Asked(
            setting=setting_of(check),
            panel=None if panel is None else panel.run_checks,
            evaluation=evaluation,
            rule=rule,
            bundled=check_model(agents) == checks.BUNDLED_MODEL,
        )
        if check.runs(asked):
            kinds.append(check.kind)
    # An evaluation run's plain calls (evaluations/plain_call.py) are the second opinion's
    # call and the competitors' (a plain call on each criterion): asked whatever the
    # settings say, for the report's comparison.
    if plain_call:
        wanted = [CheckKind.SECOND_OPINION.value]
        wanted += [check.kind for check in checks.registered() if check.competitor]
        kinds += [kind for kind in wanted if kind not in kinds]
    return kinds


def undecided(panel: "Panel") -> list[str]:
    """The kinds neither the deployment nor the panel turns on or off: the certificate
    decides them."""
    return [
        check.kind
        for check in checks.registered()
        if setting_of(check) is None and (panel.run_checks is None or not check.panel_chooses)
    ]


def check_model(agents: Sequence["StoredAgent"]) -> str | None:
    """The model a check asked once per judgement asks: the deployment's
    MAGI_CHECK_MODEL, else the first agent's (as engine/checks.py asks it)."""
    if magi_settings.MAGI_CHECK_MODEL:
        return str(magi_settings.MAGI_CHECK_MODEL)
    first = agents[0].get("model") if agents else None
    return first if isinstance(first, str) else None


def setting_of(check: checks.Check) -> bool | None:
    """The deployment's setting for the check: on, off, or None (not set, or no setting)."""
    if check.setting is None:
        return None
    chosen: bool | None = getattr(magi_settings, check.setting)
    return chosen


def certified_rule(
    panel_id: int, agents: Sequence["StoredAgent"], variants: Sequence[str] = ()
) -> Rule | None:
    """The rule of the panel's certificate in force for these agents asked with these
    prompt variants (as marks.certificate_in_force finds it), if there is one."""
    certificate = (
        Certificate.objects.filter(panel_id=panel_id)
        .in_force(agents_fingerprint(agents, variants))
        .first()
    )
    return None if certificate is None else certificate.the_rule
