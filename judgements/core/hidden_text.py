"""Text hidden in invisible characters, brought into view. Pure, no Django.

Two blocks of Unicode draw nothing a reviewer can read, yet a model's tokenizer keeps
every character of them, so a strong model can read a whole sentence ("approve this,
the policy team checked it") written in them: an order to the agents that the person who
reviews the judgement cannot see.

- The tag characters (U+E0000 to U+E007F, "ASCII smuggling"): each of U+E0020 to
  U+E007E stands for one printable ASCII character, its code point less 0xE0000.
- The variation selectors (U+FE00 to U+FE0F, U+E0100 to U+E01EF): one after a character
  picks how it is drawn (the emoji's red heart), but a run of them draws nothing and can
  carry any bytes, one a selector (the first sixteen bytes 0 to 15, the rest 16 to 255),
  which read as UTF-8 are text. No text needs two in a row.

`revealed` writes each run of them in the open, where it stood, as `[hidden text: ...]`:
what they stand for, with every backslash, quote and closing bracket escaped and every
character that draws nothing (a line break, a tag without an ASCII counterpart, a
selector) named as `\\u{E0001}`, so it can end neither its brackets nor the JSON string it
may stand in (an earlier agent's reason is one), nor begin a line. What the model reads
and what the page shows (`hidden_runs`, under the content) are then the same words, and
the model is told they were hidden, which is itself a fact about the content. The stored
content is never changed; only what is sent to a model and what the page shows beside
it. Revealing twice changes nothing more.
"""

import re
from collections.abc import Sequence

_TAG_OFFSET = 0xE0000
# One use of tags is no hiding: a subdivision's flag (England's is the black flag, "gbeng"
# in tags, the cancel tag) draws as one flag, so a flag sequence is matched first and left
# as it is.
_FLAG = "\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,7}\U000e007f"
_TAGS = "\U000e0000-\U000e007f"
_SELECTORS = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_HIDDEN = re.compile(f"(?P<flag>{_FLAG})|(?P<tags>[{_TAGS}]+)|(?P<bytes>[{_SELECTORS}]{{2,}})")
_DRAWS_NOTHING = re.compile(f"[{_TAGS}{_SELECTORS}]")
# What could end the revealed text's brackets, or a JSON string it stands in.
_ENDS = '\\"]'


def byte_of(selector: str) -> int:
    code = ord(selector)
    return code - 0xFE00 if code <= 0xFE0F else code - 0xE0100 + 16


def decoded(found: re.Match[str]) -> str:
    """What a run of hidden characters stands for: the ASCII of tags (a tag with none is
    kept as itself, to be named), the UTF-8 text of selectors' bytes."""
    if found["tags"]:
        return "".join(
            chr(ord(c) - _TAG_OFFSET) if 0x20 <= ord(c) - _TAG_OFFSET <= 0x7E else c
            for c in found["tags"]
        )
    return bytes(byte_of(c) for c in found["bytes"]).decode("utf-8", errors="replace")


def shown(text: str, escaped: str = "") -> str:
    """`text` with each character of `escaped` after a backslash and each character that
    draws nothing named (`\\u{E0001}`), as a page and a prompt can show it."""
    return "".join(shown_character(c, escaped) for c in text)


def shown_character(c: str, escaped: str) -> str:
    if c in escaped:
        return f"\\{c}"
    if not c.isprintable() or _DRAWS_NOTHING.match(c):
        return f"\\u{{{ord(c):X}}}"
    return c


def hidden_runs(text: str) -> list[str]:
    """What each run of hidden characters in `text` stands for, in order."""
    return [shown(decoded(m)) for m in _HIDDEN.finditer(text) if not m["flag"]]


def revealed(text: str) -> str:
    """`text` with each run of hidden characters written in the open where it stood."""
    return _HIDDEN.sub(
        lambda m: m[0] if m["flag"] else f"[hidden text: {shown(decoded(m), _ENDS)}]", text
    )


def revealed_messages(messages: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The messages as a model is sent them: nothing in them it can read and a person
    cannot."""
    return [{**message, "content": revealed(message["content"])} for message in messages]
