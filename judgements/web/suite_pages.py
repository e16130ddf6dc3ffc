"""The suites' pages: import a suite (a JSONL file), read its cases, export it, and start
a run of a panel over it."""

from collections.abc import MutableMapping

from django import forms
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.files.uploadedfile import UploadedFile
from django.db.models import Count
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.datastructures import MultiValueDict
from django.views.decorators.http import require_GET, require_http_methods

from judgements.configuration import change_request, panel_choice, suite_config
from judgements.core.errors import InvalidInput, Refused
from judgements.evaluations import runs, suites
from judgements.infrastructure.forms import error_summary, field_of
from judgements.models import EvaluationRun, Panel, Suite
from judgements.panels import saved_panels
from judgements.web.signed_in import signed_in_user


def visible_suite(request: HttpRequest, suite_id: int) -> Suite:
    # Another user's suite does not exist, as far as this user can tell.
    return get_object_or_404(Suite.objects.visible_to(signed_in_user(request)), pk=suite_id)


# --- suites --------------------------------------------------------------------------


class SuiteImportForm(forms.Form):
    """What the import form holds, as typed: judgements/evaluations/suites.py validates it, so the
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

    def __init__(
        self,
        data: QueryDict | None = None,
        files: MultiValueDict[str, UploadedFile] | None = None,
    ) -> None:
        super().__init__(data, files)
        # A posted text over the body limit is refused before any view sees it, so the
        # limit is said up front (a file counts apart).
        self.fields["jsonl_text"].help_text = (
            'Each line: {"id", "content", "expected": "approve"|"reject", and optionally '
            f'"title", "expected_agents", "tags"}}. Up to {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} '
            "bytes: upload a larger suite as a file."
        )


def import_from_form(form: SuiteImportForm, owner: User) -> Suite | None:
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
        sent = suite_config.Upload(
            form.cleaned_data.get("name", ""), form.cleaned_data.get("description", ""), None, data
        )
        return suite_config.create(change_request.Change(by=owner), sent)
    except InvalidInput as exc:
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
    kept = QueryDict(mutable=True)  # form.data, the POST, is immutable
    kept.update(form.data)
    kept["jsonl_text"] = text.removeprefix("\ufeff")
    form.data = kept
    form.add_error("jsonl_file", "Not imported; the file's lines are kept in the box below.")
    return "jsonl_text"


@login_required
@require_http_methods(["GET", "POST"])
def suite_list(request: HttpRequest) -> HttpResponse:
    status = 200
    if request.method == "POST":
        form = SuiteImportForm(request.POST, request.FILES)
        suite = import_from_form(form, signed_in_user(request))
        if suite is not None:
            return redirect("suite-detail", suite_id=suite.pk)
        status = 400
    else:
        form = SuiteImportForm()
    return render_suite_list(request, form, status)


def render_suite_list(
    request: HttpRequest, form: SuiteImportForm, status: int = 200
) -> HttpResponse:
    user = signed_in_user(request)
    listed = (
        Suite.objects.visible_to(user).select_related("owner").annotate(case_count=Count("cases"))
    )
    context = {
        "suites": listed,
        "form": form,
        "runs": EvaluationRun.objects.visible_to(user).select_related("suite")[:20],
        "error_summary": error_summary(form) if status == 400 else [],
    }
    return render(request, "judgements/suite_list.html", context, status=status)


class StartRunForm(forms.Form):
    panel = panel_choice.PanelChoiceField(required_message="Choose the panel to run.")
    # Named as the API's and the command line's --repeat; runs.start_run checks it.
    repeat = forms.IntegerField(
        label="Repeats",
        initial=1,
        help_text=f"How many times each case is judged (1 to {runs.MAX_REPEATS}); "
        "more than once shows which cases get unstable verdicts.",
    )

    def __init__(
        self,
        data: QueryDict | None = None,
        *,
        user: User,
        initial: MutableMapping[str, object] | None = None,
    ) -> None:
        super().__init__(data, initial=initial)
        field_of(self, "panel", panel_choice.PanelChoiceField).for_user(user)


@login_required
@require_http_methods(["GET", "POST"])
def suite_detail(request: HttpRequest, suite_id: int) -> HttpResponse:
    """A suite's cases, its export, and the form that starts a run on it (POST)."""
    suite = visible_suite(request, suite_id)
    user = signed_in_user(request)
    status, refusal = 200, None
    if request.method == "POST":
        form = StartRunForm(request.POST, user=user)
        try:
            run = start_from_form(form, suite, user)
        except Refused as exc:
            run, refusal = None, exc
        if run is not None:
            return redirect(run)
        status = 400 if refusal is None else refusal.status_code
    else:
        form = StartRunForm(user=user, initial={"panel": matching_panel(suite, user)})
    context = {
        "suite": suite,
        "cases": suite.cases.order_by("position"),
        "form": form,
        "refusal": refusal,
        "runs": EvaluationRun.objects.visible_to(user).filter(suite=suite)[:50],
        "error_summary": error_summary(form) if status == 400 else [],
    }
    response = render(request, "judgements/suite_detail.html", context, status=status)
    if refusal is not None:
        response["Retry-After"] = str(refusal.retry_after)
    return response


def matching_panel(suite: Suite, user: User) -> Panel | None:
    """The panel a suite is written for, to offer first: the one whose name the suite's
    name ends with ("starter-travel-expense" -> "travel-expense"), the longest such."""
    names = [p for p in saved_panels.visible(user) if suite.name.endswith(p.name)]
    return max(names, key=lambda p: len(p.name), default=None)


def start_from_form(form: StartRunForm, suite: Suite, creator: User) -> EvaluationRun | None:
    """The run the form asks for, or None with its errors on the form. A run over the
    user's limit of unfinished runs raises Refused."""
    if not form.is_valid():
        return None
    panel = form.cleaned_data["panel"]
    try:
        return runs.start_run(
            panel=panel,
            agents=saved_panels.agents_of(panel),
            panel_name=panel.name,
            suite=suite,
            repeats=form.cleaned_data["repeat"],
            creator=creator,
        )
    except InvalidInput as exc:
        for path, messages in exc.errors.items():
            field = path if path in form.fields else None
            for message in messages:
                form.add_error(field, message if field else located(path, message))
    return None


@login_required
@require_GET
def suite_export(request: HttpRequest, suite_id: int) -> HttpResponse:
    suite = visible_suite(request, suite_id)
    response = HttpResponse(suites.export_jsonl(suite), content_type=suites.JSONL_CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="suite-{suite.pk}.jsonl"'
    return response
