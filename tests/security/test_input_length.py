"""Length limits count the same way on every entry point and in the page's counter:
code points, a line break (CRLF as a browser sends it, or LF) as one; over the limit is an
error that keeps the text, never a cut (issue 9, item 7). The browser half is in
test_input_length_browser.py."""

import random

import pytest

from judgements.configuration import saving
from judgements.core import text
from judgements.intake import cases
from judgements.models import Judgement
from tests.support.cases import case_for

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 300  # a small content limit keeps the cases readable; the default is checked below


@pytest.fixture(autouse=True)
def content_limit(settings):
    settings.MAGI_CONTENT_MAX_CHARS = LIMIT


def text_of(length: int, seed: int) -> str:
    """length characters as the server counts them, mixing what browsers count otherwise."""
    rng = random.Random(seed)
    pieces = ["a", "\u00e9", "\U0001f600", "\U0001f468\u200d\U0001f469", "\r\n", "\n", "e\u0301"]
    out, count = [], 0
    while count < length - 2:
        piece = rng.choice(pieces)
        if count + text.char_count(piece) > length - 2:
            piece = "a"
        out.append(piece)
        count += text.char_count(piece)
    # Django strips the ends: a visible character at each.
    return "x" + "".join(out) + "x"


CASES = [(seed, length) for seed in range(6) for length in (LIMIT, LIMIT + 1)]


@pytest.mark.parametrize(("seed", "length"), CASES)
def test_content_length_is_counted_alike_on_every_entry_point(entry, seed, length):
    content = text_of(length, seed)
    assert text.char_count(content) == length
    accepted = length <= LIMIT
    case = case_for(content=content)
    api, cli, page = entry.api(case), entry.cli(case), entry.form(case)
    if accepted:
        assert (api.status, cli.status, page.status) == (201, 0, 302)
        assert [j.content for j in Judgement.objects.all()] == [content] * 3  # never cut
    else:
        assert (api.status, cli.status, page.status) == (400, 2, 400)
        expected = f"at most {LIMIT} characters (it has {LIMIT + 1})"
        assert expected in api.errors["content"][0]
        assert expected in cli.text
        assert expected in page.text and 'id="id_content_error"' in page.text
        assert Judgement.objects.count() == 0


def test_a_browser_line_break_counts_as_one_character(entry):
    # What a browser sends for LIMIT characters typed with line breaks: CRLF for each.
    typed = ("a" * 9 + "\n") * (LIMIT // 10)
    sent = typed.replace("\n", "\r\n").strip() + "a"
    assert len(sent) > LIMIT and text.char_count(sent) == LIMIT
    assert entry.form(case_for(content=sent)).status == 302
    assert Judgement.objects.get().content == sent  # stored as sent


def test_a_text_over_the_limit_comes_back_whole(entry):
    content = "\U0001f600" * (LIMIT + 50)
    page = entry.form(case_for(content=content))
    assert page.status == 400
    assert f"\n{content}</textarea>" in page.text  # the textarea holds all of it


@pytest.mark.parametrize(
    ("field", "limit"),
    [
        ("title", cases.TITLE_MAX_CHARS),
        ("agents[0].name", cases.NAME_MAX_CHARS),
        ("agents[1].criteria", cases.CRITERIA_MAX_CHARS),
    ],
)
def test_every_text_field_counts_the_same_way(entry, field, limit):
    from tests.support.inputs import with_field

    at_limit = "x" + "\U0001f600" * (limit - 1)
    assert entry.api(with_field(case_for(), field, at_limit)).status == 201
    over = entry.api(with_field(case_for(), field, at_limit + "x"))
    assert over.status == 400 and list(over.errors) == [field]


def test_the_page_shows_the_limits_the_server_applies_and_no_maxlength(entry, settings):
    settings.MAGI_CONTENT_MAX_CHARS = 20_000
    html = entry.page.get("/").content.decode()
    assert "maxlength" not in html
    assert html.count('data-max-chars="20000"') == 1
    # Three agent names and the name to save them under as a panel.
    assert html.count(f'data-max-chars="{cases.NAME_MAX_CHARS}"') == 4
    assert html.count(f'data-max-chars="{saving.DESCRIPTION_MAX_CHARS}"') == 1
    assert html.count(f'data-max-chars="{cases.CRITERIA_MAX_CHARS}"') == 3
    assert f'data-max-chars="{cases.TITLE_MAX_CHARS}"' in html
    assert 'id="id_content_count"' in html and "Up to 20000 characters." in html
    assert '<script src="/static/char-counter.js" defer></script>' in html
