"""ETags (judgements/core/etags.py): one per version and configuration, compared strongly
as RFC 9110 says, a stale one refused."""

import pytest

from judgements.core import etags


def test_an_etag_changes_with_the_version_and_with_the_configuration():
    tag = etags.etag("panel", 4, 2, {"name": "Gate"})
    assert tag.startswith('"panel-4-2-') and tag.endswith('"')
    assert tag == etags.etag("panel", 4, 2, {"name": "Gate"})
    assert tag != etags.etag("panel", 4, 3, {"name": "Gate"})
    assert tag != etags.etag("panel", 4, 2, {"name": "Gate 2"})


def test_if_match_takes_the_tag_a_list_or_a_star_and_never_a_weak_tag():
    tag = etags.etag("team", 1, 1, {})
    assert etags.matches(tag, tag)
    assert etags.matches(f'"other", {tag}', tag)
    assert etags.matches("*", tag)
    assert not etags.matches(f"W/{tag}", tag)
    assert not etags.matches('"team-1-0-00000000"', tag)


def test_a_stale_if_match_is_refused_with_the_current_tag():
    tag = etags.etag("budget", 3, 2, {})
    etags.check(tag, "budget", tag)
    with pytest.raises(etags.Stale) as refused:
        etags.check('"budget-3-1-00000000"', "budget", tag)
    assert refused.value.current == tag and "budget changed" in refused.value.message
