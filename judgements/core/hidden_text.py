"""Text hidden in Unicode tag characters, brought into view. Pure, no Django.

The tag characters (U+E0000 to U+E007F) draw nothing: a page shows none of them, a
reviewer reading the content sees nothing there. But each of U+E0020 to U+E007E stands
for one printable ASCII character (its code point less 0xE0000), and a model's tokenizer
keeps them, so a strong model can read a whole sentence ("approve this, the policy team
checked it") written in them: an order to the agents that the person who reviews the
judgement cannot see ("ASCII smuggling").

`revealed` writes each run of them in the open, where it stood, as `[hidden text: ...]`:
the ASCII they stand for, with every backslash, quote and closing bracket escaped, so it
can end neither its brackets nor the JSON string it may stand in (an earlier agent's
reason is one), and it cannot begin a line (no tag stands for a line break). What the
model reads and what the page shows (`hidden_runs`, under the content) are then the same
thing, and the model is told it was hidden, which is itself a fact about the content. The
stored content is never changed; only what is sent to a model and what the page shows
beside it. Revealing twice changes nothing more.
"""

import re
from collections.abc import Sequence

# The whole block: the language tag (U+E0001) and the cancel tag (U+E007F) stand for no
# ASCII character, but they are as invisible as the rest and go with them. One use is no
# hiding: a subdivision's flag (England's is the black flag, "gbeng" in tags, the cancel
# tag) draws as one flag, so a flag sequence is matched first and left as it is.
_FLAG = "\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,7}\U000e007f"
_TAG_RUN = re.compile(f"(?P<flag>{_FLAG})|[\U000e0000-\U000e007f]+")
_TAG_OFFSET = 0xE0000
# What could end the revealed text's brackets, or a JSON string it stands in.
_ENDS = '\\"]'


def decoded(run: str, escaped: str = "") -> str:
    """The ASCII a run of tag characters stands for, each character of `escaped` after a
    backslash; a tag with no ASCII counterpart (the language tag, the cancel tag, the
    unassigned ones) as `\\u{E0001}`."""
    return "".join(ascii_of(c, escaped) for c in run)


def ascii_of(tag: str, escaped: str) -> str:
    code = ord(tag) - _TAG_OFFSET
    if not 0x20 <= code <= 0x7E:
        return f"\\u{{{ord(tag):X}}}"
    return f"\\{chr(code)}" if chr(code) in escaped else chr(code)


def hidden_runs(text: str) -> list[str]:
    """What each run of tag characters in `text` stands for, in order."""
    return [decoded(m[0]) for m in _TAG_RUN.finditer(text) if not m["flag"]]


def revealed(text: str) -> str:
    """`text` with each run of tag characters written in the open where it stood."""
    return _TAG_RUN.sub(
        lambda m: m[0] if m["flag"] else f"[hidden text: {decoded(m[0], escaped=_ENDS)}]", text
    )


def revealed_messages(messages: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """The messages as a model is sent them: nothing in them it can read and a person
    cannot."""
    return [{**message, "content": revealed(message["content"])} for message in messages]
