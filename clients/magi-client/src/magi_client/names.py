"""What MAGI calls the same name, and text as MAGI keeps it: the one statement of these
rules, pure Python with no dependency, imported by the server (judgements/core/text.py)
and by the client (`magi plan` compares names and texts as the server will), so the two
cannot drift. The client ships it; the server packages the same file."""

import re
import unicodedata

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters a
# renderer shows as nothing, such as zero-width spaces, joiners, bidi controls, soft
# hyphens, variation selectors and the Hangul fillers; plus the blank Braille pattern,
# which renders as an empty cell.
INVISIBLE_RANGES = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x2800, 0x2800),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
INVISIBLE = re.compile(
    "[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in INVISIBLE_RANGES) + "]"
)
_WHITESPACE = re.compile(r"\s+")


def comparable_name(name: str) -> str:
    """A name as compared for uniqueness: invisible characters removed, compatibility
    forms folded (NFKC), case folded, runs of white space as one space."""
    without_invisible = INVISIBLE.sub("", name)
    folded = unicodedata.normalize("NFKC", without_invisible).casefold()
    folded = unicodedata.normalize("NFKC", folded)  # casefold can leave unnormalised text
    return _WHITESPACE.sub(" ", folded).strip()


def settled(text: str) -> str:
    """A typed text as MAGI stores it: the white space around it dropped (a YAML block
    scalar's final line break, say), as every form and schema of the server does (Django's
    CharField strips, and so does intake/schemas.py's TypedText). Everything inside is
    kept as typed."""
    return text.strip()
