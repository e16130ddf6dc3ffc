"""The site's form kit, for every area's forms (a case's, a panel's, a review's, a suite's,
a token's): text a person types, counted as the page counts it; bytes a client sent that
are not UTF-8; and every error of a page's forms at once, for the summary at its top.

A text field asks the same rule function with the same limit as the JSON schemas do
(core/text.py `text_problem`), so a text is valid or invalid in the same way wherever it
is typed or sent.
"""

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from typing import Any, TypedDict, TypeVar
from urllib.parse import unquote_to_bytes

from django import forms
from django.core.exceptions import ValidationError

from judgements.core import text
from magi_client.canonical import stored_content

FieldKind = TypeVar("FieldKind", bound=forms.Field)
FormKind = TypeVar("FormKind", bound=forms.BaseForm)


class TextField(forms.CharField):
    """Text a person types: it needs a visible character, and its length is counted as
    the page's counter counts it (code points, a line break as one).

    No HTML maxlength: browsers count it in UTF-16 units and cut what is pasted past it
    without a word. The page's counter (static/char-counter.js) reads
    data-max-chars instead, and a longer text comes back with an error, kept whole.
    """

    def __init__(self, *, max_chars: int, strip: bool = True, **kwargs: Any) -> None:
        self.max_chars = max_chars
        # The one normalisation of a text MAGI stores (magi_client/canonical.py), the
        # API's and the command line's too, instead of Django's own strip.
        self.normalise = strip
        super().__init__(strip=False, **kwargs)

    def to_python(self, value: object) -> str:
        text = str(super().to_python(value))
        return stored_content(text) if self.normalise else text

    def widget_attrs(self, widget: forms.Widget) -> dict[str, object]:
        return {**super().widget_attrs(widget), "data-max-chars": str(self.max_chars)}

    def validate(self, value: str) -> None:
        super().validate(value)
        validate_text(value, self.max_chars)


def field_of(form: forms.BaseForm, name: str, kind: type[FieldKind]) -> FieldKind:
    """A bound form's field as its class declares it, to set its choices or queryset:
    `form.fields` is typed as plain Fields."""
    field = form.fields[name]
    if not isinstance(field, kind):
        raise TypeError(f"{name} is a {type(field).__name__}, not a {kind.__name__}")
    return field


def validate_text(value: str, max_chars: int) -> None:
    if (problem := text.text_problem(value, max_chars)) is not None:
        code, message = problem
        raise ValidationError(message, code=code)


# --- bytes that are not UTF-8 -----------------------------------------------------------

# What UTF-16 text starts with; UTF-8 text (JSON, JSONL) never does.
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

NOT_UTF8 = (
    "Part of this text did not arrive as valid UTF-8; it is shown here with \ufffd in "
    "its place. Check it and send it again."
)


def invalid_utf8_fields(body: bytes) -> set[str]:
    """Names of the fields of a URL-encoded form body whose values are not UTF-8.

    Django decodes them with U+FFFD in place of the bad bytes; stored like that, the text
    would differ from what was sent without a word.
    """
    names = set()
    for pair in body.split(b"&"):
        raw_name, _, raw_value = pair.partition(b"=")
        name = unquote_to_bytes(raw_name.replace(b"+", b" ")).decode("utf-8", "replace")
        try:
            unquote_to_bytes(raw_value.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            names.add(name)
    return names


def is_valid(
    form: forms.Form,
    formset: "forms.BaseFormSet[FormKind]",
    not_utf8: AbstractSet[str] = frozenset(),
) -> bool:
    """A form and the formset beside it, both validated so every error shows at once.
    not_utf8 names posted fields whose bytes were not UTF-8 (see invalid_utf8_fields)."""
    valid = all([form.is_valid(), formset.is_valid()])
    return refuse_not_utf8([form, *formset.forms], not_utf8) and valid


def refuse_not_utf8(bound_forms: Sequence[forms.BaseForm], not_utf8: AbstractSet[str]) -> bool:
    """Each field of the validated forms whose posted bytes were not UTF-8 (not_utf8, by
    its prefixed name) refused; False when there was one."""
    valid = True
    for bound_form in bound_forms:
        for name in bound_form.fields:
            if bound_form.add_prefix(name) in not_utf8:
                bound_form.add_error(name, NOT_UTF8)
                valid = False
    return valid


# --- the error summary ------------------------------------------------------------------


class ErrorEntry(TypedDict):
    """One line of a page's error summary: the field's label, the id its link focuses
    (both empty for an error of the whole form) and the message."""

    label: str
    id: str
    message: str


def error_summary(
    *forms_with_errors: forms.BaseForm,
    formset: "forms.BaseFormSet[FormKind] | None" = None,
    formset_label: str = "Agent",
) -> list[ErrorEntry]:
    """Every field error of the forms (and a formset's, "Agent 2: Model: ..."), in page
    order, for the summary at the top of a page (templates/judgements/_error_summary.html)
    whose links move focus to the field."""
    entries: list[ErrorEntry] = []
    for form in forms_with_errors:
        entries += field_errors(form, "")
    if formset is not None:
        for number, member in enumerate(formset.forms, start=1):
            entries += field_errors(member, f"{formset_label} {number}: ")
        entries += [{"label": "", "id": "", "message": str(e)} for e in formset.non_form_errors()]
    return entries


def field_errors(form: forms.BaseForm, label_prefix: str) -> list[ErrorEntry]:
    # A field's errors iterate as their messages (str, or a lazy translation of one).
    entries: list[ErrorEntry] = [
        {"label": f"{label_prefix}{field.label}", "id": field.id_for_label, "message": str(error)}
        for field in form
        for error in field.errors
    ]
    entries += [{"label": "", "id": "", "message": str(e)} for e in form.non_field_errors()]
    return entries
