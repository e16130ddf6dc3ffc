"""The values a judgement's status and an agent's decision take."""

from django.db import models

from judgements.core import rules


class Status(models.TextChoices):
    IDLE = "idle", "Idle"
    JUDGING = "judging", "Judging"
    APPROVED = "approved", "Approved"
    REJECTED = "rejected", "Rejected"
    ERROR = "error", "Error"
    # Never a panel's status: the verdict in force of a contested judgement whose case
    # asked to hold it until a person confirms or overrides it (Judgement.verdict).
    HELD = "held", "Held for review"


class Trust(models.TextChoices):
    """What a decided verdict's mark says a user may do with it
    (judgements/core/contested.py): look first, rely on it within its certificate's bound,
    or know that nobody has measured how far to trust this panel."""

    CONTESTED = "contested", "Contested"
    NOT_CONTESTED = "not_contested", "Not contested"
    UNMEASURED = "unmeasured", "Trust not measured for this panel"


class ReviewRefusal(models.TextChoices):
    """Why a person may not confirm or override a judgement (Judgement.review_refusal)."""

    FOUR_EYES = "four_eyes", "Four eyes: nobody reviews a judgement they started"
    NOT_A_REVIEWER = "not_a_reviewer", "Not a reviewer of its panel"


class Decision(models.TextChoices):
    APPROVE = rules.Vote.APPROVE.value, "Approve"
    REJECT = rules.Vote.REJECT.value, "Reject"


# The decision an approved or rejected status stands for; keyed by str, as a status is
# read back from the database.
DECISION_OF_STATUS: dict[str, Decision] = {
    Status.APPROVED: Decision.APPROVE,
    Status.REJECTED: Decision.REJECT,
}


FINISHED_STATUSES = (Status.APPROVED, Status.REJECTED, Status.ERROR)


# Ids are 64-bit integers in every database we run on: a larger number names no row (and
# SQLite would refuse to compare with it).
ID_MAX = 2**63 - 1


def is_id(value: int) -> bool:
    return 1 <= value <= ID_MAX


def ids_from_one(name: str) -> models.CheckConstraint:
    """Every table of MAGI's refuses a row whose id is below 1 (issue 70): no way of MAGI's
    makes one, and a check that looks for rows above the log's first ids would never see
    it; `manage.py audit verify` names any that appears in a table it cannot constrain
    (Django's users and groups: audit/coverage.py ids_below_one)."""
    return models.CheckConstraint(condition=models.Q(id__gte=1), name=name)
