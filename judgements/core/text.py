"""What counts as text, as visible, as one character and as the same name; and a text
written as data on one line of a prompt (`one_line_json`).

The checks normalise; the text itself is stored exactly as typed.
"""

import hashlib
import json
import re
import unicodedata

from magi_client import names
from magi_client.names import comparable_name as comparable_name  # re-exported

# The invisible characters and the name rule are the client's too (`magi plan` compares
# names as the server does): one module, magi_client/names.py, pure, imported by both.
_INVISIBLE = names.INVISIBLE
_SURROGATE = re.compile("[\ud800-\udfff]")
_LINE_BREAK = re.compile("\r\n")


def is_invisible(char: str) -> bool:
    return bool(_INVISIBLE.match(char)) or char.isspace() or unicodedata.category(char) == "Cc"


def has_visible_character(text: str) -> bool:
    return not all(is_invisible(char) for char in text)


def first_surrogate(text: str) -> int | None:
    """Where the first lone surrogate is: JSON's "\\ud800" escape can carry half of a
    UTF-16 pair, which is not a character and cannot be stored or shown."""
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


def char_count(text: str) -> int:
    """Characters as the page counts them: code points, a line break one character.

    Browsers send a textarea's line breaks as CRLF and count them as one.
    """
    return len(text) - len(_LINE_BREAK.findall(text))


def text_problem(value: str, max_chars: int) -> tuple[str, str] | None:
    """What is wrong with a text a person typed, as (code, message); None when nothing is.
    The one statement of these rules: the page's form fields and the API's schemas both
    ask it (judgements/intake/cases.py, judgements/intake/schemas.py)."""
    if (position := first_surrogate(value)) is not None:
        escape = f"\\u{ord(value[position]):04x}"
        return "surrogate", (
            f"Holds a lone UTF-16 surrogate ({escape} at character {position + 1}), which "
            "is not a character: send the text as valid Unicode."
        )
    if value and not has_visible_character(value):
        return "invisible", "This field is required: it holds only invisible characters."
    if (length := char_count(value)) > max_chars:
        return "max_length", (
            f"Ensure this value has at most {max_chars} characters (it has {length}); a line "
            "break counts as one character."
        )
    return None


def name_key(name: str) -> str:
    """What the database's uniqueness constraint compares: fixed length, so a name that
    NFKC expands (one character can become eighteen) still fits an index."""
    return hashlib.sha256(comparable_name(name).encode()).hexdigest()


def escaped(text: str) -> str:
    """Text safe to print anywhere: a lone surrogate as its \\udxxx escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


# What str.splitlines breaks a line at and json.dumps leaves as it is (it escapes only the
# characters below U+0020): a model's tokenizer may read any of them as a new line.
LINE_BREAKS_JSON_KEEPS = {"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def one_line_json(text: str) -> str:
    """`text` as one JSON string literal on one line: every quote, backslash and line break
    in it escaped, so nothing it holds can end the string or begin a line of a prompt (a
    model's reason among the earlier answers, its quoted words, the bench's "[user+json]"
    content). Letters of every language stay as they are, not \\u escapes."""
    literal = json.dumps(text, ensure_ascii=False)
    for mark, escaped in LINE_BREAKS_JSON_KEEPS.items():
        literal = literal.replace(mark, escaped)
    return literal
