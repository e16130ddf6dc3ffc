"""The embedded default survives its own crash: the server is killed mid-judgement, comes
back on the same port and database, resumes the judgement from the stored decisions, and
the open page's dropped websocket reconnects and shows the rest live."""

import pytest

from tests.support.live_page import AGENTS, CONTENT, expect_box, expect_status
from tests.support.live_site import LiveMagi, submit_judgement


@pytest.fixture
def crashable_magi(gated_llm, tmp_path):
    # Short leases, so the restarted server takes over the dead one's judgement quickly.
    magi = LiveMagi(
        tmp_path / "magi",
        gated_llm.base_url,
        users=1,
        MAGI_LEASE_SECONDS=1,
        MAGI_SWEEP_INTERVAL=0.2,
    )
    magi.start()
    yield magi
    magi.stop()


def test_a_crashed_server_resumes_and_the_open_page_reconnects(browser, crashable_magi, llm):
    magi = crashable_magi
    context = browser.new_context(base_url=magi.url)
    context.add_cookies([{"name": "sessionid", "value": magi.sessions["user01"], "url": magi.url}])
    page = context.new_page()
    llm.script("model-a", votes="AAA")
    llm.script("model-b", votes="RRR")
    llm.script("model-c", votes="AAA")
    llm.gate.close()
    submit_judgement(page, "Crash", CONTENT, AGENTS)
    llm.gate.wait_parked(("model-a", 1), ("model-b", 1), ("model-c", 1))
    llm.gate.allow("model-a", 1)
    expect_box(page, 1, "pending")

    magi.crash()  # Balthasar's and Casper's round-1 calls die with the server
    magi.serve()
    # The page was not reloaded: its socket reconnects by itself and resyncs.
    llm.gate.open()
    expect_status(page, "approved")
    expect_box(page, 1, "approve")
    expect_box(page, 2, "reject")
    expect_box(page, 3, "approve")
    # Melchior's stored round-1 decision was not asked for again.
    assert len(llm.requests_for("model-a", 1)) == 1
    assert len(llm.requests_for("model-a")) == 3
    context.close()


def test_an_open_page_tries_its_socket_again_within_two_seconds(browser, crashable_magi):
    # The ws extension's own default waits up to 64 s after a few refused attempts: a page
    # open across a slow restart would show a stale judgement long after the server is back.
    context = browser.new_context(base_url=crashable_magi.url)
    page = context.new_page()
    page.goto("/accounts/login/")
    delays = page.evaluate(
        "() => Array.from({length: 40}, (_, tries) => htmx.config.wsReconnectDelay(tries))"
    )
    assert all(0 <= delay <= 2000 for delay in delays), delays
    context.close()
