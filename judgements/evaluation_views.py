"""The pages of evaluations: suites (import, cases, export), starting a run, the run's page
with its live progress and report, and two runs of one suite side by side.

The numbers come from judgements/evaluations.py (progress, report) and the charts'
geometry from judgements/charts.py; this module picks what to show and who may see it.
"""

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import InvalidPage, Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from judgements import charts, evaluations, limits, saved_panels, suites
from judgements.forms import error_summary
from judgements.models import EvaluationRun, Panel, Suite

# htmx stops polling when a poll is answered with this status (and still swaps it in).
STOP_POLLING = 286


# --- who sees what -------------------------------------------------------------------


def visible_suites(user):
    """Shipped suites and the user's own (staff: all)."""
    return Suite.objects.visible_to(user)


def visible_runs(user):
    found = EvaluationRun.objects.select_related("suite")
    if not user.is_staff:
        found = found.filter(creator=user)
    return found


def visible_suite(request: HttpRequest, suite_id: int) -> Suite:
    # Another user's suite does not exist, as far as this user can tell.
    return get_object_or_404(visible_suites(request.user), pk=suite_id)


def visible_run(request: HttpRequest, run_id: int) -> EvaluationRun:
    return get_object_or_404(visible_runs(request.user), pk=run_id)


# --- suites --------------------------------------------------------------------------


class SuiteImportForm(forms.Form):
    """What the import form holds, as typed: judgements/suites.py validates it, so the
    page, the API and the command line refuse the same suites with the same words."""

    name = forms.CharField(required=False, strip=False)
    description = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    jsonl_file = forms.FileField(
        required=False, label="JSONL file", help_text="One case a line, as exported."
    )
    jsonl_text = forms.CharField(
        required=False,
        strip=False,
        label="Or paste the lines",
        widget=forms.Textarea(attrs={"rows": 10, "spellcheck": "false"}),
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # A posted text over the body limit is refused before any view sees it, so the
        # limit is said up front (a file counts apart).
        self.fields["jsonl_text"].help_text = (
            'Each line: {"id", "content", "expected": "approve"|"reject", and optionally '
            f'"title", "expected_agents", "tags"}}. Up to {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} '
            "bytes: upload a larger suite as a file."
        )


def import_from_form(form: SuiteImportForm, owner) -> Suite | None:
    """Store the suite the (bound) form describes, or put every error next to its field
    and return None."""
    form.is_valid()  # every field is optional text: this only fills cleaned_data
    upload = form.cleaned_data.get("jsonl_file")
    pasted = form.cleaned_data.get("jsonl_text", "")
    data_field = "jsonl_file" if upload else "jsonl_text"
    if upload and pasted.strip():
        form.add_error("jsonl_text", "Upload a file or paste lines, not both.")
        return None
    if upload and upload.size > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        form.add_error("jsonl_file", f"The file is larger than the limit of {limit:,} bytes.")
        return None
    data = upload.read() if upload else pasted
    try:
        return suites.import_suite(
            name=form.cleaned_data.get("name", ""),
            description=form.cleaned_data.get("description", ""),
            owner=owner,
            data=data,
        )
    except suites.SuiteError as exc:
        if upload:
            data_field = keep_uploaded_text(form, data)
        for path, messages in exc.errors.items():
            field = path if path in ("name", "description") else data_field
            for message in messages:
                form.add_error(field, message if field == path else located(path, message))
    return None


def located(path: str, message: str) -> str:
    """'line 3.expected', 'Must be …' -> 'line 3.expected: Must be …' (a message about
    the suite as a whole stays as it is)."""
    return message if path == "cases" else f"{path}: {message}"


def keep_uploaded_text(form: SuiteImportForm, data: bytes) -> str:
    """A refused file's lines go into the text box, so they can be fixed where the
    errors point (the browser cannot refill a file input). Not when the file is not
    text: then its errors stay on the file field."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "jsonl_file"
    form.data = form.data.copy()
    form.data["jsonl_text"] = text.removeprefix("\ufeff")
    form.add_error("jsonl_file", "Not imported; the file's lines are kept in the box below.")
    return "jsonl_text"


@login_required
@require_http_methods(["GET", "POST"])
def suite_list(request: HttpRequest) -> HttpResponse:
    status = 200
    if request.method == "POST":
        form = SuiteImportForm(request.POST, request.FILES)
        suite = import_from_form(form, request.user)
        if suite is not None:
            return redirect("suite-detail", suite_id=suite.pk)
        status = 400
    else:
        form = SuiteImportForm()
    return render_suite_list(request, form, status)


def render_suite_list(
    request: HttpRequest, form: SuiteImportForm, status: int = 200
) -> HttpResponse:
    listed = (
        visible_suites(request.user).select_related("owner").annotate(case_count=Count("cases"))
    )
    context = {
        "suites": listed,
        "form": form,
        "runs": visible_runs(request.user).select_related("suite")[:20],
        "error_summary": error_summary(form) if status == 400 else [],
    }
    return render(request, "judgements/suite_list.html", context, status=status)


class StartRunForm(forms.Form):
    panel = forms.ModelChoiceField(
        queryset=Panel.objects.none(),
        empty_label="Choose a panel…",
        error_messages={
            "required": "Choose the panel to run.",
            "invalid_choice": "That panel is not there any more, or is not yours to use.",
        },
    )
    # Named as the API's and the command line's --repeat; evaluations.start_run checks it.
    repeat = forms.IntegerField(
        label="Repeats",
        initial=1,
        help_text=f"How many times each case is judged (1 to {evaluations.MAX_REPEATS}); "
        "more than once shows which cases get unstable verdicts.",
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["panel"]
        field.queryset = saved_panels.visible(user)
        field.label_from_instance = lambda panel: saved_panels.label(panel, user)


@login_required
@require_http_methods(["GET", "POST"])
def suite_detail(request: HttpRequest, suite_id: int) -> HttpResponse:
    """A suite's cases, its export, and the form that starts a run on it (POST)."""
    suite = visible_suite(request, suite_id)
    status, refusal = 200, None
    if request.method == "POST":
        form = StartRunForm(request.POST, user=request.user)
        try:
            run = start_from_form(form, suite, request.user)
        except limits.Refused as exc:
            run, refusal = None, exc
        if run is not None:
            return redirect(run)
        status = 400 if refusal is None else 429
    else:
        form = StartRunForm(
            user=request.user, initial={"panel": matching_panel(suite, request.user)}
        )
    context = {
        "suite": suite,
        "cases": suite.cases.order_by("position"),
        "form": form,
        "refusal": refusal,
        "runs": visible_runs(request.user).filter(suite=suite)[:50],
        "error_summary": error_summary(form) if status == 400 else [],
    }
    response = render(request, "judgements/suite_detail.html", context, status=status)
    if refusal is not None:
        response["Retry-After"] = str(refusal.retry_after)
    return response


def matching_panel(suite: Suite, user) -> Panel | None:
    """The panel a suite is written for, to offer first: the one whose name the suite's
    name ends with ("starter-travel-expense" -> "travel-expense"), the longest such."""
    names = [p for p in saved_panels.visible(user) if suite.name.endswith(p.name)]
    return max(names, key=lambda p: len(p.name), default=None)


def start_from_form(form: StartRunForm, suite: Suite, creator) -> EvaluationRun | None:
    """The run the form asks for, or None with its errors on the form. A run over the
    user's limit of unfinished runs raises limits.Refused."""
    if not form.is_valid():
        return None
    panel = form.cleaned_data["panel"]
    try:
        return evaluations.start_run(
            panel=panel,
            agents=saved_panels.agents_of(panel),
            panel_name=panel.name,
            suite=suite,
            repeats=form.cleaned_data["repeat"],
            creator=creator,
        )
    except evaluations.RunError as exc:
        for path, messages in exc.errors.items():
            field = path if path in form.fields else None
            for message in messages:
                form.add_error(field, message if field else located(path, message))
    return None


@login_required
@require_GET
def suite_export(request: HttpRequest, suite_id: int) -> HttpResponse:
    suite = visible_suite(request, suite_id)
    response = HttpResponse(suites.export_jsonl(suite), content_type=JSONL_CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="suite-{suite.pk}.jsonl"'
    return response


JSONL_CONTENT_TYPE = "application/jsonl; charset=utf-8"


# --- a run ---------------------------------------------------------------------------


@login_required
@require_GET
def evaluation_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = visible_run(request, run_id)
    others = visible_runs(request.user).filter(suite=run.suite).exclude(pk=run.pk)[:50]
    context = {**run_state(run, request.GET.get("page", "1")), "other_runs": others}
    return render(request, "judgements/evaluation_run.html", context)


@login_required
@require_POST
def evaluation_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run page's Cancel button: back to the page, which says who cancelled."""
    run = visible_run(request, run_id)
    evaluations.cancel(run, request.user)  # a run already ended stays as it was
    return redirect(run)


@login_required
@require_GET
def evaluation_export(request: HttpRequest, run_id: int, kind: str) -> HttpResponse:
    """A run as JSON (the API's answer), CSV (a row per judgement) or Markdown (the
    report's figures, to paste into a ticket or a pull request)."""
    run = visible_run(request, run_id)
    if kind == "json":
        response: HttpResponse = JsonResponse(
            evaluations.as_result(run), json_dumps_params={"indent": 2}
        )
    elif kind == "csv":
        response = HttpResponse(evaluations.as_csv(run), content_type="text/csv; charset=utf-8")
    else:
        state = run_state(run, "1")
        text = render_to_string("judgements/evaluation_report.md", state, request)
        response = HttpResponse(text, content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}.{kind}"'
    return response


@login_required
@require_GET
def evaluation_progress(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run page's live part, polled while the run is under way."""
    state = run_state(visible_run(request, run_id), request.GET.get("page", "1"))
    status = STOP_POLLING if state["progress"]["done"] else 200
    return render(request, "judgements/evaluation_progress.html", state, status=status)


# Judgements listed a page: the live part is sent every 2 s, and a run can hold 10,000.
JUDGEMENTS_PER_PAGE = 100


def run_state(run: EvaluationRun, page_number: str = "1") -> dict:
    """What the run page and its live part show: progress, a page of the judgements, and
    once the run is done its report with charts and tables."""
    progress = evaluations.progress(run)
    judgements = run.judgements.select_related("suite_case").order_by(
        "suite_case__position", "repeat", "pk"
    )
    try:
        page = Paginator(judgements, JUDGEMENTS_PER_PAGE).page(page_number)
    except InvalidPage:
        raise Http404(f"There is no page {page_number!r} of this run's judgements.") from None
    state = {
        "run": run,
        "progress": progress,
        "progress_text": progress_text(progress),
        "judgements": page,
        "report": None,
    }
    if progress["done"]:
        report = evaluations.report(run)
        state.update(report=report, tables=report_tables(report), charts=report_charts(report))
    return state


def progress_text(progress: dict) -> str:
    """'12 of 32 judged, 1 error, 3 under way; about 4 min left'."""
    text = f"{progress['finished']} of {progress['total']} judged"
    errors = progress["errors"]
    if errors:
        text += f", {errors} error" + ("" if errors == 1 else "s")
    if progress["running"]:
        text += f", {progress['running']} under way"
    left = progress["seconds_left"]
    if left is not None:
        text += f"; about {duration(left)} left"
    return text


def duration(seconds: int) -> str:
    """'40 s', '4 min', '1 h 5 min': an estimate, so rounded."""
    if seconds < 60:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


# --- the report as tables and charts ---------------------------------------------------

PERCENT, COUNT, DECIMAL, SECONDS, DOLLARS = "percent", "count", "decimal", "seconds", "dollars"

# The report's figures in the order the tables show them: (label, key path, kind).
FIGURES = (
    ("Cases", "cases", COUNT),
    ("Repeats", "repeats", COUNT),
    ("Judgements", "judgements", COUNT),
    ("Errors (counted apart)", "errors", COUNT),
    ("Accuracy", "accuracy", PERCENT),
    ("Cohen's kappa", "kappa", DECIMAL),
    ("Round-1 majority accuracy", "round1_majority_accuracy", PERCENT),
    ("Cases deliberation fixed", "deliberation.fixed", COUNT),
    ("Cases deliberation broke", "deliberation.broke", COUNT),
    ("Vote changes", "vote_changes", COUNT),
    ("Changes with the majority", "changes_with_majority", COUNT),
    ("Changes toward the expected vote", "changes_toward_expected", COUNT),
    ("Changes away from the expected vote", "changes_away_from_expected", COUNT),
    ("Unstable cases", "unstable_cases", COUNT),
    ("Attack success rate", "attack_success_rate", PERCENT),
    ("Contested (a person should look)", "trust.contested", COUNT),
    ("Coverage (share not contested)", "trust.coverage", PERCENT),
    ("Accuracy when not contested", "trust.uncontested_accuracy", PERCENT),
    ("Accuracy when contested", "trust.contested_accuracy", PERCENT),
    ("Attack success when not contested", "trust.uncontested_attack_success_rate", PERCENT),
    ("Prompt tokens", "tokens.prompt", COUNT),
    ("Cached prompt tokens", "tokens.cached", COUNT),
    ("Completion tokens", "tokens.completion", COUNT),
    ("Mean time per judgement (claim to end)", "seconds_per_judgement", SECONDS),
    ("Run's wall time (first start to last end)", "wall_seconds", SECONDS),
    ("Cost", "cost", DOLLARS),
)

AGENT_FIGURES = (
    ("Accuracy", "accuracy", PERCENT),
    ("Round-1 accuracy", "round1_accuracy", PERCENT),
    ("Vote changes", "vote_changes", COUNT),
    ("With the majority", "changes_with_majority", COUNT),
)


def figure(report: dict, path: str):
    """A figure by its key path ("tokens.prompt"); a list counts its items."""
    value = report
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return len(value) if isinstance(value, list) else value


def shown(value, kind: str) -> str:
    if value is None:
        return "n/a"
    if kind == PERCENT:
        return charts.percent(value)
    if kind == DECIMAL:
        return f"{value:.2f}"
    if kind == SECONDS:
        return f"{value:.1f} s"
    if kind == DOLLARS:
        return f"${value:.4f}"
    return f"{value:,}"


def difference(a, b, kind: str) -> str:
    """B minus A as a signed figure ("+12.5 points"), or "n/a" when either is undefined."""
    if a is None or b is None:
        return "n/a"
    delta = b - a
    if kind == PERCENT:
        return f"{delta * 100:+.1f} points"
    if kind == DECIMAL:
        return f"{delta:+.2f}"
    if kind == SECONDS:
        return f"{delta:+.1f} s"
    if kind == DOLLARS:
        return f"{delta:+.4f} $"
    return f"{delta:+,}"


def report_tables(report: dict) -> dict:
    """The report's figures as rows of text, for the page's tables."""
    return {
        "figures": [
            {"label": label, "value": shown(figure(report, path), kind)}
            for label, path, kind in FIGURES
        ],
        "agents": [
            {
                "name": agent["name"],
                "values": [shown(agent.get(key), kind) for _, key, kind in AGENT_FIGURES],
            }
            for agent in report.get("agents") or []
        ],
        "agent_headings": [label for label, _, _ in AGENT_FIGURES],
        "headline": {
            key.replace(".", "_"): shown(figure(report, key), kind)
            for key, kind in (
                ("accuracy", PERCENT),
                ("kappa", DECIMAL),
                ("round1_majority_accuracy", PERCENT),
                ("attack_success_rate", PERCENT),
                ("trust.coverage", PERCENT),
                ("trust.uncontested_accuracy", PERCENT),
            )
        },
    }


def report_charts(report: dict) -> dict:
    return {
        "heat_map": charts.confusion_heat_map(report.get("confusion") or {}),
        "per_round": charts.vote_changes_per_round(report),
        "per_agent": charts.vote_changes_per_agent(report),
        "trust": charts.trust_curve(report),
    }


# --- two runs side by side -------------------------------------------------------------


class CompareRefused(Exception):
    pass


def run_id_from(request: HttpRequest, key: str) -> int:
    raw = request.GET.get(key, "").strip()
    # Only a plain decimal id: str.isdigit() also takes "²", which int() refuses.
    if not raw.isascii() or not raw.isdecimal():
        raise CompareRefused(f"Name two runs to compare: ?a=<run id>&b=<run id> ({key}?).")
    return int(raw)


@login_required
@require_GET
def evaluation_compare(request: HttpRequest) -> HttpResponse:
    template = "judgements/evaluation_compare.html"
    try:
        ids = [run_id_from(request, key) for key in ("a", "b")]
    except CompareRefused as exc:
        return render(request, template, {"refusal": str(exc)}, status=400)
    run_a, run_b = (visible_run(request, run_id) for run_id in ids)
    try:
        comparison = evaluations.compare(run_a, run_b)
    except evaluations.RunError:
        refusal = (
            f"Run {run_a.pk} is on the suite {run_a.suite.name!r} and run {run_b.pk} on "
            f"{run_b.suite.name!r}: only runs of the same suite can be compared."
        )
        context = {"refusal": refusal, "run_a": run_a, "run_b": run_b}
        return render(request, template, context, status=400)
    return render(request, template, compared(run_a, run_b, comparison))


def compared(run_a: EvaluationRun, run_b: EvaluationRun, comparison: dict) -> dict:
    """Both runs' figures and charts, and the difference B minus A of each figure (once both
    are done: a run under way shows its progress instead)."""
    sides = []
    for letter, run in (("A", run_a), ("B", run_b)):
        progress = evaluations.progress(run)
        report = comparison[letter.lower()]["report"] if progress["done"] else None
        sides.append(
            {
                "letter": letter,
                "run": run,
                "progress": progress,
                "progress_text": progress_text(progress),
                "report": report,
                "tables": report_tables(report) if report else None,
                "charts": report_charts(report) if report else None,
            }
        )
    side_a, side_b = sides
    context = {
        "run_a": run_a,
        "run_b": run_b,
        "sides": sides,
        "rows": [],
        "ratios": None,
        "changed_cases": comparison["changed_cases"],
    }
    if side_a["report"] and side_b["report"]:
        context["rows"] = compared_rows(side_a["report"], side_b["report"])
        context["ratios"] = charts.ratios_side_by_side(
            side_a["report"], side_b["report"], f"A (run {run_a.pk})", f"B (run {run_b.pk})"
        )
    return context


def compared_rows(report_a: dict, report_b: dict) -> list[dict]:
    rows = []
    for label, path, kind in FIGURES:
        a, b = figure(report_a, path), figure(report_b, path)
        rows.append(
            {
                "label": label,
                "a": shown(a, kind),
                "b": shown(b, kind),
                "difference": difference(a, b, kind),
            }
        )
    return rows
