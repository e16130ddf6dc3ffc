"""Canonical JSON (magi_client/canonical.py): the fast writer writes the
same bytes as the `rfc8785` package on every value it takes, generated (hypothesis);
values it does not take (floats, large integers, non-ASCII keys) go to the package; what
JSON cannot hold canonically is refused; and RFC 8785's own examples."""

import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from magi_client import canonical

keys = st.text(max_size=8)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(keys, inner, max_size=5),
    max_leaves=30,
)


@settings(max_examples=2000, deadline=None)
@given(values)
def test_it_writes_what_the_rfc8785_package_writes(value):
    try:
        expected = rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        try:
            canonical.canonical(value)
        except canonical.NotCanonical:
            return
        raise AssertionError(f"{value!r} should be refused") from None
    assert canonical.canonical(value) == expected


def test_the_rfcs_examples():
    assert canonical.canonical({"numbers": [333333333.33333329, 1e30, 4.50, 2e-3, 1e-27]}) == (
        b'{"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27]}'
    )
    assert canonical.canonical({"\u20ac": 1, "\r": 2, "\ufb33": 3, "1": 4, "\U0001f600": 5}) == (
        '{"\\r":2,"1":4,"\u20ac":1,"\U0001f600":5,"\ufb33":3}'.encode()
    )
    assert canonical.canonical({"a": "\u2028\x7f\x1f\n"}) == '{"a":"\u2028\x7f\\u001f\\n"}'.encode()
