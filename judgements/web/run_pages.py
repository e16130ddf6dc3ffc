"""An evaluation run's page: its live progress (per round, with an estimate), cancelling it,
its report, and its exports."""

from typing import NotRequired, TypedDict

from django.contrib.auth.decorators import login_required
from django.core.paginator import InvalidPage, Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST

from judgements.core.errors import InvalidInput
from judgements.evaluations import run_reports, runs
from judgements.evaluations.run_reports import RunReport
from judgements.models import EvaluationRun, Judgement
from judgements.web.run_report import (
    compared,
    progress_text,
    report_charts,
    report_tables,
    run_certificate,
)
from judgements.web.run_report_shapes import ReportCharts, ReportTables, RunCertificate
from judgements.web.signed_in import signed_in_user

# htmx stops polling when a poll is answered with this status (and still swaps it in).
STOP_POLLING = 286


def visible_run(request: HttpRequest, run_id: int) -> EvaluationRun:
    return get_object_or_404(EvaluationRun.objects.visible_to(signed_in_user(request)), pk=run_id)


# --- a run ---------------------------------------------------------------------------


@login_required
@require_GET
def evaluation_run(request: HttpRequest, run_id: int) -> HttpResponse:
    run = visible_run(request, run_id)
    others = (
        EvaluationRun.objects.visible_to(signed_in_user(request))
        .filter(suite=run.suite)
        .exclude(pk=run.pk)[:50]
    )
    context = {**run_state(run, request.GET.get("page", "1")), "other_runs": others}
    return render(request, "judgements/evaluation_run.html", context)


@login_required
@require_POST
def evaluation_cancel(request: HttpRequest, run_id: int) -> HttpResponse:
    """The run page's Cancel button: back to the page, which says who cancelled."""
    run = visible_run(request, run_id)
    runs.cancel(run, signed_in_user(request))  # a run already ended stays as it was
    return redirect(run)


@login_required
@require_GET
def evaluation_export(request: HttpRequest, run_id: int, kind: str) -> HttpResponse:
    """A run as JSON (the API's answer), CSV (a row per judgement) or Markdown (the
    report's figures, to paste into a ticket or a pull request)."""
    run = visible_run(request, run_id)
    if kind == "json":
        response: HttpResponse = JsonResponse(
            runs.as_result(run).model_dump(mode="json"), json_dumps_params={"indent": 2}
        )
    elif kind == "csv":
        response = HttpResponse(runs.as_csv(run), content_type="text/csv; charset=utf-8")
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


class RunState(TypedDict):
    """What the run page and its live part show (`run_state`); the report's tables,
    charts and certificate once the run is done."""

    run: EvaluationRun
    progress: runs.Progress
    progress_text: str
    judgements: Page[Judgement]
    report: RunReport | None
    tables: NotRequired[ReportTables]
    charts: NotRequired[ReportCharts]
    run_certificate: NotRequired[RunCertificate | None]


def run_state(run: EvaluationRun, page_number: str = "1") -> RunState:
    """What the run page and its live part show: progress, a page of the judgements, and
    once the run is done its report with charts and tables."""
    progress = runs.progress(run)
    judgements = run.judgements.select_related("suite_case").order_by(
        "suite_case__position", "repeat", "pk"
    )
    try:
        page = Paginator(judgements, JUDGEMENTS_PER_PAGE).page(page_number)
    except InvalidPage:
        raise Http404(f"There is no page {page_number!r} of this run's judgements.") from None
    state: RunState = {
        "run": run,
        "progress": progress,
        "progress_text": progress_text(progress),
        "judgements": page,
        "report": None,
    }
    if progress["done"]:
        report = run_reports.report(run)
        state["report"] = report
        state["tables"] = report_tables(report)
        state["charts"] = report_charts(report)
        state["run_certificate"] = run_certificate(run)
    return state


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
        comparison = run_reports.compare(run_a, run_b)
    except InvalidInput:
        refusal = (
            f"Run {run_a.pk} is on the suite {run_a.suite.name!r} and run {run_b.pk} on "
            f"{run_b.suite.name!r}: only runs of the same suite can be compared."
        )
        context = {"refusal": refusal, "run_a": run_a, "run_b": run_b}
        return render(request, template, context, status=400)
    return render(request, template, compared(run_a, run_b, comparison))
