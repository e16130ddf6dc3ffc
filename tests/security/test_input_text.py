"""Text that is not what it looks like, through the page, the API and the command line:
lone surrogates, text with no visible character, and names that differ only in what a
reader cannot see (issue 9, items 1, 5 and 6)."""

import random
import unicodedata

import pytest

from judgements.core import text
from judgements.models import Agent, Judgement
from tests.support.cases import case_for
from tests.support.inputs import html_id, page_fields, urlencode_bytes, with_field

pytestmark = pytest.mark.django_db(transaction=True)

TEXT_FIELDS = ["title", "content", "agents[0].name", "agents[1].criteria", "agents[2].name"]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d"]  # the last: half an emoji
INVISIBLE = [
    "\u200b",  # zero width space
    "\u200c\u200d",  # joiners
    "\u2060\ufeff",  # word joiner, byte order mark
    "\u3164",  # Hangul filler
    "\u115f\u1160",  # Hangul choseong/jungseong fillers
    "\u00ad\u00ad",  # soft hyphens
    "\u202e\u202c",  # right-to-left override, pop
    "\u2066\u2069",  # isolates
    "\u061c",  # Arabic letter mark
    "\u034f",  # combining grapheme joiner
    "\ufe0f",  # variation selector
    "\U000e0001\U000e0041",  # tag characters
    "\u2800",  # blank Braille pattern
    "\u200e \u200f\u3000\u00a0",  # marks mixed with spaces
]


def surrogate_cases():
    rng = random.Random(9)
    for field in TEXT_FIELDS:
        for surrogate in SURROGATES:
            where = rng.choice(["start", "middle", "end", "alone"])
            value = {
                "start": surrogate + "Trip",
                "middle": "Tr" + surrogate + "ip",
                "end": "Trip" + surrogate,
                "alone": surrogate,
            }[where]
            yield pytest.param(field, value, id=f"{field}-{ord(surrogate):x}-{where}")


@pytest.mark.parametrize(("field", "value"), list(surrogate_cases()))
def test_a_lone_surrogate_is_refused_naming_the_field(entry, field, value):
    api = entry.api(with_field(case_for(), field, value))
    # Valid JSON and a string, as the schema says: a rule it cannot express refuses (422).
    assert api.status == 422
    assert list(api.errors) == [field]
    assert "surrogate" in api.errors[field][0]
    cli = entry.cli(with_field(case_for(), field, value))
    assert cli.status == 2
    assert f"invalid input: {field}: " in cli.text and "surrogate" in cli.text
    assert Judgement.objects.count() == 0


@pytest.mark.parametrize("surrogate", SURROGATES)
def test_a_lone_surrogate_in_a_model_or_a_field_name_is_refused(entry, surrogate):
    case = case_for()
    case["agents"][1]["model"] = "model-b" + surrogate
    api = entry.api(case)
    assert api.status == 400 and list(api.errors) == ["agents[1].model"]
    case = case_for()
    case["agents"][0]["x" + surrogate] = "1"
    api = entry.api(case)
    assert api.status == 400
    assert list(api.errors) == [f"agents[0].x\\u{ord(surrogate):04x}"]
    assert entry.cli(case).status == 2
    assert Judgement.objects.count() == 0


@pytest.mark.parametrize("surrogate", [b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\xb0\x80"])
def test_a_surrogate_sent_to_the_page_as_utf8_bytes_is_refused(entry, surrogate):
    # The form's only way to carry one: its UTF-8-like encoding, which is not UTF-8.
    fields = {**page_fields(case_for()), "title": b"Trip " + surrogate}
    answer = entry.form_body(urlencode_bytes(fields))
    assert answer.status == 400
    assert 'id="id_title_error"' in answer.text and "valid UTF-8" in answer.text
    assert Judgement.objects.count() == 0


def invisible_cases():
    rng = random.Random(6)
    for field in TEXT_FIELDS:
        for chars in INVISIBLE:
            yield pytest.param(field, chars, id=f"{field}-{chars.encode('unicode_escape')!r}")
        # Random mixtures of the same characters, three per field.
        pool = "".join(INVISIBLE)
        for number in range(3):
            mixture = "".join(rng.choice(pool) for _ in range(rng.randint(2, 12)))
            yield pytest.param(field, mixture, id=f"{field}-mixture{number}")


@pytest.mark.parametrize(("field", "value"), list(invisible_cases()))
def test_text_with_no_visible_character_counts_as_blank(entry, field, value):
    case = with_field(case_for(), field, value)
    api = entry.api(case)
    # Not empty, so schema-valid (minLength 1); blank by a rule the schema cannot express.
    assert api.status == 422 and list(api.errors) == [field]
    assert "required" in api.errors[field][0]
    cli = entry.cli(case)
    assert cli.status == 2 and f"invalid input: {field}: This field is required" in cli.text
    page = entry.form(case)
    assert page.status == 400
    assert f'id="{html_id(field)}_error"' in page.text and "This field is required" in page.text
    assert Judgement.objects.count() == 0


@pytest.mark.parametrize(
    "value",
    [
        "I\u200bam going",
        "\u2060Trip\ufeff",
        "\u202eTrip",
        "a\u0301",  # a letter with a combining accent
        "\u3164\u3164x",
        "\u00adx",
        "\U0001f600",  # an emoji alone is visible
    ],
)
def test_text_with_a_visible_character_is_kept_exactly_as_typed(entry, value):
    case = case_for(title=value, content=value)
    assert entry.api(case).status == 201
    judgement = Judgement.objects.get()
    assert (judgement.title, judgement.content) == (value, value)


# Pairs of names a reader takes for the same name: refused together, on every database.
SAME_NAMES = [
    ("Casper", "Cas\u200bper"),
    ("Casper", "casper"),
    ("Casper", "CASPER\u2060"),
    ("Casper", "\uff23\uff41\uff53\uff50\uff45\uff52"),  # full-width letters
    ("Casper", "\u00adCasper"),
    ("Strasse", "Stra\u00dfe"),  # ß folds to ss
    ("fine", "\ufb01ne"),  # the fi ligature
    ("Cafe\u0301", "Caf\u00e9"),  # decomposed and composed é
    ("Ana Lee", "Ana\u00a0Lee"),  # no-break space
    ("Ana Lee", "Ana  Lee"),
    ("\u2167", "viii"),  # Roman numeral eight
    ("\u0130nci", "\u0130NCI"),
]
# Pairs a reader tells apart: both accepted.
DIFFERENT_NAMES = [
    ("\u0130nci", "inci"),  # dotted capital I folds to i + combining dot in Python
    ("\u0130nci", "\u0131nci"),  # dotless i
    ("Casper", "Caspar"),
    ("Ana Lee", "AnaLee"),
    ("\u00c5ngstr\u00f6m", "Angstrom"),
]


def agents_named(first: str, second: str) -> dict:
    case = case_for()
    case["agents"][0]["name"], case["agents"][2]["name"] = first, second
    return case


@pytest.mark.parametrize(("first", "second"), SAME_NAMES)
def test_names_that_read_the_same_are_refused_on_every_entry_point(entry, first, second):
    case = agents_named(first, second)
    api = entry.api(case)
    assert api.status == 422 and list(api.errors) == ["agents[2].name"]
    assert "already called" in api.errors["agents[2].name"][0]
    cli = entry.cli(case)
    assert cli.status == 2 and "invalid input: agents[2].name: Another agent" in cli.text
    page = entry.form(case)
    assert page.status == 400 and 'id="id_agents-2-name_error"' in page.text
    assert Judgement.objects.count() == 0


@pytest.mark.parametrize(("first", "second"), DIFFERENT_NAMES)
def test_names_that_differ_are_stored_as_typed(entry, first, second):
    api = entry.api(agents_named(first, second))
    assert api.status == 201, api.text
    names = list(Agent.objects.order_by("position").values_list("name", flat=True))
    assert names == [first, "Balthasar", second]


def test_generated_names_that_read_the_same_compare_the_same():
    # Random names from confusable pieces: names equal under NFKC and case folding (an
    # independent oracle) compare the same, for the form and for the database key, which
    # is a hash of the same comparable form (text.name_key).
    rng = random.Random(5)
    pieces = ["a", "A", "\uff21", "\u200b", "\u00df", "ss", "\u0130", "i", "\u0131", "\ufb01"]
    pieces += ["fi", "e\u0301", "\u00e9", " ", "\u00a0", "\u2167", "VIII", "\u00ad", "K", "\u212a"]
    drawn = {"".join(rng.choice(pieces) for _ in range(rng.randint(1, 4))) for _ in range(400)}
    names = sorted(n for n in drawn if text.has_visible_character(n.strip()))
    for a in names:
        for b in names[:60]:
            same = text.comparable_name(a) == text.comparable_name(b)
            if unicodedata.normalize("NFKC", a).casefold() == unicodedata.normalize(
                "NFKC", b
            ).casefold() and not any(c in a + b for c in "\u200b\u00ad\u00a0 "):
                assert same, (a, b)
