"""Finding a pattern in a page or a script, where a test needs what it matched."""

import re


def found(pattern: str, text: str, flags: int = 0) -> re.Match[str]:
    """The first match of `pattern` in `text`; the test fails, naming the pattern, when
    there is none (instead of an AttributeError on None)."""
    match = re.search(pattern, text, flags)
    assert match is not None, f"{pattern!r} not found in {text[:200]!r}…"
    return match


def csrf_token(page: str) -> str:
    """The CSRF token of the first form of a page's HTML, to post it as a browser would."""
    return found(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
