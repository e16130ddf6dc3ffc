"""The content limit in a real browser: what the counter shows is what the server
applies, and nothing typed or pasted is cut (issue 9, item 7)."""

import sqlite3
from contextlib import closing

import pytest
from playwright.sync_api import expect

from judgements.core import text
from tests.support.inputs import UNUSED_LLM
from tests.support.live_site import LiveMagi, chromium

LIMIT = 20_000


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site = LiveMagi(tmp_path_factory.mktemp("input-site"), UNUSED_LLM, users=4).start()
    yield site
    site.stop()


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture
def page(site, browser):
    context = browser.new_context(base_url=site.url)
    context.set_default_timeout(20_000)
    user = site.usernames[0]
    context.add_cookies([{"name": "sessionid", "value": site.sessions[user], "url": site.url}])
    page = context.new_page()
    page.goto("/")
    yield page
    context.close()


def stored_content(site, title: str) -> str:
    with closing(sqlite3.connect(site.db_path)) as db:
        row = db.execute(
            "SELECT content FROM judgements_judgement WHERE title = ?", (title,)
        ).fetchone()
    return row[0]


def fill_case(page, title: str, content: str) -> None:
    page.get_by_label("Title").fill(title)
    page.get_by_label("Content").fill(content)
    for number, model in enumerate(("model-a", "model-b", "model-c"), start=1):
        group = page.get_by_role("group", name=f"Agent {number}")
        group.get_by_label("Name").fill(f"Agent {number}")
        group.get_by_label("Model").select_option(model)
        group.get_by_label("Criteria").fill("Approve only safe plans.")


def code_points(page) -> int:
    return page.get_by_label("Content").evaluate("(el) => Array.from(el.value).length")


def test_one_character_over_is_shown_and_refused_without_a_cut(page):
    content = "a" * (LIMIT + 1)
    fill_case(page, "Too long", content)
    counter = page.locator("#id_content_count")
    expect(counter).to_have_text("20,001 / 20,000 characters: 1 over the limit")
    assert code_points(page) == LIMIT + 1  # not cut at the limit
    page.get_by_role("button", name="Judge").click()
    expect(page.locator('[data-field="content"] .field-error')).to_contain_text(
        "at most 20000 characters (it has 20001)"
    )
    assert page.get_by_label("Content").input_value() == content  # kept whole
    expect(counter).to_have_text("20,001 / 20,000 characters: 1 over the limit")


def test_fifteen_thousand_emoji_are_counted_as_characters_and_kept(page, site):
    content = "\U0001f600" * 15_000
    fill_case(page, "Emoji", content)
    expect(page.locator("#id_content_count")).to_have_text("15,000 / 20,000 characters")
    assert code_points(page) == 15_000
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")
    assert stored_content(site, "Emoji") == content


def test_twenty_thousand_characters_with_line_breaks_are_accepted_whole(page, site):
    line = "b" * 99 + "\n"
    content = (line * (LIMIT // 100)).rstrip("\n") + "c"  # 20,000 with 199 line breaks
    assert len(content) == LIMIT
    fill_case(page, "Lines", content)
    expect(page.locator("#id_content_count")).to_have_text("20,000 / 20,000 characters")
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")
    stored = stored_content(site, "Lines")
    assert stored == content.replace("\n", "\r\n")  # as the browser sent it
    assert text.char_count(stored) == LIMIT


def test_the_counter_counts_as_the_server_does(page):
    samples = [
        "  padded  ",
        "e\u0301",
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "line\nbreak\n\nend",
        "\u3000wide space\u3000",
        "\ufeffbom",
    ]
    content = page.get_by_label("Content")
    counter = page.locator("#id_content_count")
    for sample in samples:
        content.fill(sample)
        expected = text.char_count(sample.strip())
        expect(counter).to_have_text(f"{expected:,} / 20,000 characters")
