"""The new-judgement page: its form, and the four things a POST to it may ask, one
function each (refresh the model list, fill the agents from a saved panel, save the agents
as a panel, judge). Each keeps what was typed and draws the page again, or redirects to
the judgement it started."""

from dataclasses import dataclass, field

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from judgements.configuration import panel_choice, saving
from judgements.core.errors import InvalidInput, Refused
from judgements.evaluations import tryout
from judgements.infrastructure.forms import error_summary, invalid_utf8_fields, is_valid
from judgements.intake import cases, rows
from judgements.intake.start import Submission, submit
from judgements.llm import providers
from judgements.llm.local.files import BUNDLED_MODEL_NAME
from judgements.models import Panel
from judgements.panels import saved_panels
from judgements.web.judgement_pages import visible_judgement
from judgements.web.signed_in import signed_in_user

NEW_PANEL_PREFIX = "new_panel"


@dataclass
class NewJudgementPage:
    """What the page shows: the case form and its agents, the saved panel they were
    filled from (a hidden field carries its id) and why it cannot be used, the page's
    two panel forms, and what saving a panel or judging did."""

    form: cases.JudgementForm
    formset: cases.BaseAgentFormSet
    choose_form: panel_choice.ChoosePanelForm
    panel_form: saving.PanelForm
    chosen: Panel | None = None
    panel_problem: str = ""
    saved: Panel | None = None
    refusal: Refused | None = None
    status: int = 200
    examples: list[tryout.Example] = field(default_factory=list)

    def render(self, request: HttpRequest) -> HttpResponse:
        posted = request.method == "POST"
        # After "Fill in the agents", go on from the content (or Judge once it is there)
        # instead of the top of the page.
        focus = ""
        if self.chosen is not None and posted and self.status == 200:
            focus = "judge" if self.form["content"].value() else "content"
        if focus == "content":
            self.form.fields["content"].widget.attrs["autofocus"] = True
        available = providers.available_models()
        summary = []
        if self.status == 400:
            summary = error_summary(
                self.form, self.choose_form, self.panel_form, formset=self.formset
            )
        context = {
            "form": self.form,
            "formset": self.formset,
            "models": available,
            "discovering": providers.discovering(),
            "model_problems": providers.discovery.problems(),
            "refusal": self.refusal,
            "choose_form": self.choose_form,
            "chosen_panel": self.chosen,
            "panel_problem": self.panel_problem,
            "panel_form": self.panel_form,
            "saved_panel": self.saved,
            "examples": tryout.offered(),
            "bundled_model": bundled_in(self.formset, available),
            "error_summary": summary,
            "focus_after_fill": focus,
        }
        response = render(request, "judgements/new.html", context, status=self.status)
        if self.refusal is not None:
            response["Retry-After"] = str(self.refusal.retry_after)
        return response


@login_required
@require_http_methods(["GET", "POST"])
def judgement_new(request: HttpRequest) -> HttpResponse:
    if request.method == "GET":
        return blank(request).render(request)
    action = next((act for button, act in ACTIONS if button in request.POST), judge)
    return action(request, as_posted(request))


def as_posted(request: HttpRequest) -> NewJudgementPage:
    """The page as the POST left it: everything typed kept, nothing validated yet."""
    form, formset = cases.bind(initial=cases.typed_case(request.POST))
    chosen, problem = chosen_panel(request)
    return NewJudgementPage(
        form=form,
        formset=formset,
        choose_form=panel_choice.ChoosePanelForm(user=signed_in_user(request)),
        panel_form=new_panel_form(request),
        chosen=chosen,
        panel_problem=problem,
    )


def refresh_models(request: HttpRequest, page: NewJudgementPage) -> HttpResponse:
    """Ask the discovering providers now, and show the form again exactly as typed."""
    providers.discovery.refresh_all()
    return page.render(request)


def use_panel(request: HttpRequest, page: NewJudgementPage) -> HttpResponse:
    """Fill the agents from a saved panel; the title and content stay as typed."""
    choose_form = panel_choice.ChoosePanelForm(request.POST, user=signed_in_user(request))
    if not choose_form.is_valid():
        page.choose_form, page.status = choose_form, 400
        return page.render(request)
    page.chosen, page.panel_problem = choose_form.cleaned_data["start_panel"], ""
    page.formset = saving.agents_formset(agents=saved_panels.agents_of(page.chosen))
    return page.render(request)


def save_panel(request: HttpRequest, page: NewJudgementPage) -> HttpResponse:
    """Save the three agents as typed as a new panel of the user's; keep everything."""
    page.panel_form = new_panel_form(request, request.POST)
    page.formset = saving.agents_formset(request.POST)
    not_utf8 = invalid_utf8_fields(request.body) if is_urlencoded(request) else set()
    if is_valid(page.panel_form, page.formset, not_utf8):
        try:
            page.saved = saving.store(page.panel_form, page.formset, by=signed_in_user(request))
        except InvalidInput as exc:
            page.panel_form.add_error("name", exc.errors["name"])
    if page.saved is None:
        page.status = 400
        return page.render(request)
    # The agents on the page are now this panel's: a judgement records it.
    page.chosen, page.panel_problem = page.saved, ""
    page.panel_form = new_panel_form(request)
    return page.render(request)


def judge(request: HttpRequest, page: NewJudgementPage) -> HttpResponse:
    """Start the judgement, or show why not: the fields' errors (400) or a limit (429)."""
    page.form, page.formset = cases.bind(request.POST)
    not_utf8 = invalid_utf8_fields(request.body) if is_urlencoded(request) else set()
    if is_valid(page.form, page.formset, not_utf8) and not page.panel_problem:
        case = cases.cleaned_case(page.form, page.formset, page.chosen)
        try:
            started = submit([case], Submission(creator=signed_in_user(request)))
        except Refused as exc:
            page.refusal, page.status = exc, exc.status_code
            return page.render(request)
        return redirect(started.judgement)
    page.status = 400
    return page.render(request)


# Which submit button was pressed; any other POST is "Judge".
ACTIONS = (
    ("refresh_models", refresh_models),
    ("use_panel", use_panel),
    ("save_panel", save_panel),
)


def blank(request: HttpRequest) -> NewJudgementPage:
    """The page for a GET: empty, or filled from ?again=<judgement>, ?example=<panel>
    &case=<id>, or ?panel=<id> ("Judge with this panel" on the panel list)."""
    initial: cases.FormInitial = {}
    chosen = None
    again = request.GET.get("again", "").strip()
    if again:
        # Only a plain decimal id: str.isdigit() also takes "²", which int() refuses.
        if not again.isascii() or not again.isdecimal():
            raise Http404(f"There is no judgement {again!r} to run again.")
        judgement = visible_judgement(request, int(again))
        initial = cases.form_initial(rows.case_of(judgement))
        if judgement.panel is not None and judgement.panel.visible_to(signed_in_user(request)):
            chosen = judgement.panel
    example = None
    if "example" in request.GET:
        example = tryout.find(request.GET["example"], request.GET.get("case", ""))
        if example is None:
            raise Http404("There is no such example.")
        initial = {"title": example.title, "content": example.content}
        chosen = example.panel
    form, formset = cases.bind(initial=initial)
    if example is not None:
        formset = saving.agents_formset(agents=saved_panels.agents_of(example.panel))
    start = request.GET.get("panel", "").strip()
    if start:
        if not saved_panels.is_decimal_id(start):
            raise Http404(f"There is no panel {start!r}.")
        try:
            chosen = saved_panels.resolve(int(start), signed_in_user(request))
        except InvalidInput:
            raise Http404(f"There is no panel {start!r}.") from None
        formset = saving.agents_formset(agents=saved_panels.agents_of(chosen))
    return NewJudgementPage(
        form=form,
        formset=formset,
        choose_form=panel_choice.ChoosePanelForm(user=signed_in_user(request)),
        panel_form=new_panel_form(request),
        chosen=chosen,
    )


def bundled_in(formset: cases.BaseAgentFormSet, available: list[str]) -> bool:
    """Whether an agent on the form uses the bundled demonstration model (or it is the
    only model there is): the page then says what it is good for."""
    if available == [BUNDLED_MODEL_NAME]:
        return True
    return any(member["model"].value() == BUNDLED_MODEL_NAME for member in formset.forms)


def new_panel_form(request: HttpRequest, data: QueryDict | None = None) -> saving.PanelForm:
    return saving.PanelForm(data, prefix=NEW_PANEL_PREFIX, owner=signed_in_user(request))


def chosen_panel(request: HttpRequest) -> tuple[Panel | None, str]:
    """The saved panel the posted agents were filled from (the hidden "panel" field), and
    why it cannot be recorded if it cannot: a judgement never silently drops it."""
    raw = request.POST.get("panel", "").strip()
    if not raw:
        return None, ""
    try:
        if not saved_panels.is_decimal_id(raw):
            raise InvalidInput({"panel": ["Not a panel id."]})
        return saved_panels.resolve(int(raw), signed_in_user(request)), ""
    except InvalidInput:
        return None, (
            "The saved panel these agents were filled from is not there any more (or not "
            "yours to use). The agents below are kept; press Judge again to judge without it."
        )


def is_urlencoded(request: HttpRequest) -> bool:
    return request.content_type == "application/x-www-form-urlencoded"
