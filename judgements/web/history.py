"""The history list: who sees which judgements, the filters of its form, and its exports.

The filters are a GET form (a link keeps them); a bad value is shown next to its field
and filters nothing, so a typo never hides judgements silently. The verdict filter
reads the verdict in force (an override's decision, "held" while a person has not
decided), as the list shows it. Hidden judgements leave the list, never the database:
the audit (overrides, confirmations, the admin, the API) keeps them.
"""

import csv
import io
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta

from django import forms
from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.http import QueryDict
from django.utils import timezone

from judgements.core.csv_cells import spreadsheet_safe, yes_no
from judgements.infrastructure.forms import field_of
from judgements.models import UNREVIEWED, Decision, Judgement, Panel, Status, Trust, held

PER_PAGE = 50

UNDER_WAY = "under_way"
VERDICTS = [
    ("", "Any"),
    (Status.APPROVED.value, "Approved"),
    (Status.REJECTED.value, "Rejected"),
    (Status.HELD.value, "Held for review"),
    (Status.ERROR.value, "Error"),
    (UNDER_WAY, "Queued or judging"),
]
# The verdict's mark (Judgement.trust). "no" is "Not contested" under a certificate; a
# verdict nobody measured is "unmeasured", never "no".
CONTESTED = [
    ("", "Any"),
    ("yes", "Contested"),
    ("waiting", "Contested, not reviewed"),
    ("no", "Not contested"),
    ("unmeasured", "Not measured"),
]
RUNS = [
    ("", "People's judgements"),
    ("all", "With evaluation runs'"),
    ("only", "Only evaluation runs'"),
]


class HistoryFilter(forms.Form):
    q = forms.CharField(
        required=False,
        max_length=200,
        label="Search",
        help_text="Words in the title or the content.",
    )
    verdict = forms.ChoiceField(required=False, choices=VERDICTS, label="Verdict")
    contested = forms.ChoiceField(
        required=False,
        choices=CONTESTED,
        label="Trust",
        help_text="Not contested: under the panel's certificate. Not measured: no "
        "certificate holds for the agents.",
    )
    panel = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, label="Panel")
    since = forms.DateField(
        required=False, label="From", widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        required=False, label="To", widget=forms.DateInput(attrs={"type": "date"})
    )
    runs = forms.ChoiceField(required=False, choices=RUNS, label="Evaluation runs")
    hidden = forms.BooleanField(required=False, label="Show hidden judgements")

    def __init__(self, data: QueryDict | None, *, user: User) -> None:
        super().__init__(data)
        panels = Panel.objects.all() if user.is_staff else Panel.objects.filter(owner=user)
        field_of(self, "panel", forms.ChoiceField).choices = [("", "Any")] + [
            (p.pk, p.name) for p in panels.order_by("name")
        ]

    def clean(self) -> dict[str, object]:
        super().clean()
        cleaned = self.cleaned_data
        since, until = cleaned.get("since"), cleaned.get("until")
        if since and until and until < since:
            self.add_error("until", "Must not be before the From date.")
        return cleaned


def visible(user: User) -> QuerySet[Judgement]:
    return Judgement.objects.visible_to(user).select_related(
        "creator", "panel", "override__by", "confirmation", "evaluation_run"
    )


def filtered(user: User, form: HistoryFilter) -> QuerySet[Judgement]:
    """The user's judgements the form's valid fields select (an invalid form: the
    default list, people's judgements not hidden)."""
    judgements = visible(user)
    chosen = form.cleaned_data if form.is_valid() else {}
    if not chosen.get("hidden"):
        judgements = judgements.filter(hidden_at__isnull=True)
    runs = chosen.get("runs", "")
    if runs == "":
        judgements = judgements.filter(evaluation_run__isnull=True)
    elif runs == "only":
        judgements = judgements.filter(evaluation_run__isnull=False)
    if words := chosen.get("q"):
        for word in words.split():
            judgements = judgements.filter(Q(title__icontains=word) | Q(content__icontains=word))
    if verdict := chosen.get("verdict"):
        judgements = judgements.filter(verdict_is(verdict))
    if contested := chosen.get("contested"):
        judgements = judgements.filter(contested_is(contested))
    if panel := chosen.get("panel"):
        judgements = judgements.filter(panel_id=panel)
    if since := chosen.get("since"):
        judgements = judgements.filter(created_at__gte=start_of(since))
    if until := chosen.get("until"):
        judgements = judgements.filter(created_at__lt=start_of(until) + timedelta(days=1))
    return judgements


def start_of(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def verdict_is(verdict: str) -> Q:
    """Judgement.verdict in SQL: an override's decision, else held, else the status."""
    if verdict == UNDER_WAY:
        return Q(status__in=[Status.IDLE, Status.JUDGING])
    if verdict == Status.HELD:
        return held()
    if verdict == Status.ERROR:
        return Q(status=Status.ERROR)
    decision = Decision.APPROVE if verdict == Status.APPROVED else Decision.REJECT
    # A level that escalated is no verdict of its panel's: the next level's is in force.
    by_panel = Q(override__isnull=True, status=verdict, escalated=False) & ~held()
    return Q(override__decision=decision) | by_panel


def contested_is(choice: str) -> Q:
    """The mark the filter asks for (Judgement.trust)."""
    if choice == "yes":
        return Q(contested=True)
    if choice == "waiting":
        return Q(contested=True) & UNREVIEWED
    if choice == "unmeasured":
        return Q(trust=Trust.UNMEASURED)
    return Q(trust=Trust.NOT_CONTESTED)


# --- export ----------------------------------------------------------------------------

CSV_COLUMNS = (
    "id",
    "title",
    "verdict",
    "panel_status",
    "contested",
    "trust",
    "reviewed",
    "panel",
    "evaluation_run",
    "creator",
    "created_at",
    "finished_at",
    "url",
    # An escalation story's level (docs/escalation.md): its own level and whether it
    # escalated, so a row whose panel_status is not the story's verdict says why.
    "level",
    "escalated",
)


def as_csv(judgements: Iterable[Judgement], base_url: str) -> str:
    """The judgements a filter selects, one row each (the content stays out: it can be
    long and hold anything; the row links to the judgement)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for judgement in judgements:
        writer.writerow(
            [
                judgement.pk,
                spreadsheet_safe(judgement.title),
                judgement.verdict,
                judgement.status,
                yes_no(judgement.contested),
                judgement.trust or "",
                yes_no(judgement.reviewed),
                spreadsheet_safe(judgement.panel.name if judgement.panel else ""),
                judgement.evaluation_run_id or "",
                spreadsheet_safe(judgement.creator.get_username() if judgement.creator else ""),
                judgement.created_at.isoformat(),
                judgement.finished_at.isoformat() if judgement.finished_at else "",
                base_url + judgement.get_absolute_url(),
                judgement.level,
                yes_no(judgement.escalated),
            ]
        )
    return out.getvalue()
