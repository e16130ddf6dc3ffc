"""Bytes that are not UTF-8 text, through the command line (file and standard input) and
the page's form, and query strings int() cannot read (issue 9, items 3, 4 and 10)."""

import json
import os

import pytest
from django.conf import settings

from judgements.models import Judgement
from tests.support.cases import case_for
from tests.support.inputs import html_id, page_fields, run_judge_process, urlencode_bytes

pytestmark = pytest.mark.django_db(transaction=True)

VALID = json.dumps(case_for(), ensure_ascii=False)
NOT_UTF8 = {
    "ff-byte": b"\xff" + VALID.encode(),
    "ff-inside-a-string": VALID.encode().replace(b"Japan", b"Jap\xffan"),
    "latin-1": VALID.replace("Japan", "Jap\u00e9n").encode("latin-1"),
    "utf-16-le-bom": VALID.encode("utf-16"),
    "utf-16-be": VALID.encode("utf-16-be"),
    "utf-32": VALID.encode("utf-32"),
    "truncated-sequence": VALID.encode().replace(b"Japan", b"Japan\xe2\x82"),
    "overlong-slash": VALID.encode().replace(b"Japan", b"Japan\xc0\xaf"),
    "encoded-surrogate": VALID.encode().replace(b"Japan", b"Japan\xed\xa0\x80"),
}


def cli_env(tmp_path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAGI_", "OPENAI_"))}
    env.update(
        SECRET_KEY=settings.SECRET_KEY,
        MAGI_VAR_DIR=str(tmp_path),
        MAGI_MODELS="model-a,model-b,model-c",
        MAGI_DEFAULT_BASE_URL="http://127.0.0.1:9/v1",
        MAGI_DEFAULT_API_KEY="unused",
    )
    return env


@pytest.mark.parametrize("raw", NOT_UTF8.values(), ids=NOT_UTF8.keys())
def test_a_case_file_that_is_not_utf8_exits_2_with_a_message(entry, raw):
    answer = entry.cli(raw)
    assert answer.status == 2
    assert "invalid input: case: " in answer.text and "is not UTF-8 text" in answer.text
    assert Judgement.objects.count() == 0


@pytest.mark.parametrize("name", ["ff-byte", "utf-16-le-bom", "latin-1"])
def test_standard_input_that_is_not_utf8_exits_2_with_a_message(tmp_path, name):
    answer = run_judge_process(["-"], stdin=NOT_UTF8[name], env=cli_env(tmp_path))
    assert answer.status == 2, answer.text
    assert "invalid input: case: standard input is not UTF-8 text" in answer.text
    assert "Traceback" not in answer.text
    if name.startswith("utf-16"):
        assert "looks like UTF-16 or UTF-32" in answer.text


def test_a_utf8_byte_order_mark_is_read(entry):
    answer = entry.cli(b"\xef\xbb\xbf" + VALID.encode())
    assert answer.status == 0, answer.text
    assert Judgement.objects.get().content == case_for()["content"]


FORM_FIELDS = ["title", "content", "agents-0-name", "agents-1-criteria", "agents-2-name"]
BAD_BYTES = [b"\xff", b"\xc3", b"\xe9t\xe9", b"\xed\xa0\x80", b"\xc0\x80", b"\xf8\x88\x80\x80\x80"]


@pytest.mark.parametrize("field", FORM_FIELDS)
@pytest.mark.parametrize("bad", BAD_BYTES, ids=lambda b: b.hex())
def test_a_form_field_that_is_not_utf8_is_refused_next_to_it(entry, field, bad):
    fields = page_fields(case_for())
    fields[field] = fields[field].encode() + bad
    answer = entry.form_body(urlencode_bytes(fields))
    assert answer.status == 400
    path = field.replace("agents-", "agents[").replace("-", "].", 1) if "-" in field else field
    assert f'id="{html_id(path)}_error"' in answer.text
    assert answer.text.count('class="field-error"') == 1
    assert "did not arrive as valid UTF-8" in answer.text
    # The rest is kept as sent.
    assert 'value="Trip to Japan' in answer.text
    assert "Balthasar approves only safe plans." in answer.text or field == "agents-1-criteria"
    assert Judgement.objects.count() == 0


def test_a_replacement_character_typed_as_utf8_is_accepted(entry):
    fields = page_fields(case_for(title="Trip \ufffd"))
    answer = entry.form_body(urlencode_bytes(fields))
    assert answer.status == 302
    assert Judgement.objects.get().title == "Trip \ufffd"


AGAIN = ["\u00b2", "\u00b9\u00b2", "\u0663", "\uff11", "-1", "1.0", "1e3", "abc", "%FF", "0x1"]
AGAIN += ["99999999999999999999999999", "\u2460", "1\u200b"]


@pytest.mark.parametrize("again", AGAIN)
def test_run_again_with_something_that_is_not_an_id_is_not_found(entry, again):
    response = entry.page.get("/?again=" + again)
    assert response.status_code == 404


def test_run_again_with_an_id_of_mine_fills_the_form(entry, make_judgement):
    judgement = make_judgement(creator=entry.user)
    response = entry.page.get(f"/?again={judgement.pk}")
    assert response.status_code == 200 and 'value="Trip to Japan"' in response.content.decode()
