"""Certificates and marked verdicts stored as MAGI stores them, for the tests of the
trust a page, a model or the marks shows."""

from datetime import UTC, datetime

from judgements.core import certificate, kept_verdicts
from judgements.models import Certificate, Judgement, Status
from judgements.panels import variant_setting
from tests.support.states import bring

CERTIFIED_AT = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


def certificate_for(panel, *, certified=True, **fields) -> Certificate:
    """A certificate stored as certify() stores one: the rule chosen on 22 of 66 verdicts
    and tested on the other 44, of which answer confidence 0.95 keeps 40, all right
    (their own bound 0.1 ** (1 / 40)); the promise is the target, 90 %."""
    observed = kept_verdicts.clopper_pearson_lower(40, 40, 0.1)
    values = {
        "panel": panel,
        "agents": panel.agents,
        # Of its current agents and the prompt variants it runs (the site's default unless
        # it names others), as certify() fingerprints a panel.
        "fingerprint": variant_setting.fingerprint_of(panel),
        "runs": [],
        "suites": [],
        "target": 0.9,
        "delta": 0.1,
        "samples": 66,
        "method": certificate.METHOD,
        "split": {
            "seed": 0,
            "selection_share": 1 / 3,
            "selection": [f"s{n}" for n in range(22)],
            "test": [f"t{n}" for n in range(44)],
        },
        "certified": certified,
        "rule": {"source": "answer", "threshold": 0.95, "absent": []} if certified else None,
        "coverage": 40 / 44 if certified else None,
        "accuracy": 1.0 if certified else None,
        "bound": 0.9 if certified else None,
        "kept": 40 if certified else 0,
        "best": {
            "rule": {"source": "answer", "threshold": 0.6, "absent": []},
            "description": "answer confidence at least 0.6",
            "coverage": 1.0,
            "bound": 0.8123,
        },
        "curve": [
            {"threshold": 0.95, "coverage": 40 / 44, "accuracy": 1.0, "bound": observed},
            {"threshold": 0.6, "coverage": 1.0, "accuracy": 40 / 44, "bound": 0.8123},
        ],
        "created_at": CERTIFIED_AT,
    }
    return Certificate.objects.create(**(values | fields))


def marked(judgement: Judgement, **fields) -> Judgement:
    """The judgement decided (approved) with the mark given, as the engine stores it."""
    bring(Judgement.objects.filter(pk=judgement.pk), Status.APPROVED, **fields)
    return Judgement.objects.get(pk=judgement.pk)
