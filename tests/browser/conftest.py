"""One daphne, one fake LLM and one headless Chromium per session; per test a fresh user,
a fresh browser context and a reset fake LLM."""

import os
from itertools import count
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.browser_pages import DESKTOP
from tests.support.live_site import LiveMagi, chromium
from tests.support.llm_server import FakeLLM
from tests.support.slack_server import SlackServer
from tests.support.smtp_server import SmtpServer

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
USERS = 60

expect.set_options(timeout=10_000)


@pytest.fixture(scope="package")
def gated_llm():
    server = FakeLLM().start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def smtp():
    """A real SMTP server the live site sends reviewers' notifications to."""
    server = SmtpServer().start()
    yield server
    server.stop()


@pytest.fixture(scope="package")
def slack_server():
    """The Slack Web API server the live site posts held verdicts to (docs/slack.md)."""
    server = SlackServer()
    yield server
    server.stop()


@pytest.fixture
def slack(slack_server):
    """The Slack server, reset: the test says who is in its workspace."""
    slack_server.reset()
    yield slack_server
    slack_server.reset()


@pytest.fixture(scope="package")
def live_magi(gated_llm, smtp, slack_server, tmp_path_factory):
    magi = LiveMagi(
        tmp_path_factory.mktemp("magi-live"),
        gated_llm.base_url,
        users=USERS,
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=smtp.port,
        MAGI_SITE_URL="https://magi.example.com",
        MAGI_SLACK_API_URL=slack_server.url,
    )
    magi.start()
    yield magi
    magi.stop()


@pytest.fixture(scope="package")
def browser():
    with chromium() as browser:
        yield browser


@pytest.fixture(scope="package")
def usernames(live_magi):
    names = iter(live_magi.usernames)
    return lambda: next(names)


@pytest.fixture
def llm(gated_llm):
    """The fake LLM, reset: the test scripts the models it uses."""
    gated_llm.reset()
    yield gated_llm
    gated_llm.reset()  # opens the gate: nothing a failed test parked stays parked


@pytest.fixture
def new_context(browser, live_magi, request):
    contexts = []
    numbers = count(1)

    def make(**options):
        options.setdefault("viewport", DESKTOP)
        context = browser.new_context(base_url=live_magi.url, **options)
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context

    yield make
    report = getattr(request.node, "rep_call", None)
    failed = report is not None and report.failed
    for context in contexts:
        if failed:
            for page in context.pages:
                path = live_magi.var_dir / f"{request.node.name}-{next(numbers)}.png"
                page.screenshot(path=str(path), full_page=True)
                print(f"screenshot of the failed page: {path}")
        context.close()
    if failed:
        print(live_magi.log())


@pytest.fixture
def log_in_as(new_context, usernames, live_magi):
    """A page of a fresh user, already logged in: log_in_as(**context_options) -> page."""

    def make(**options):
        context = new_context(**options)
        session = live_magi.sessions[usernames()]
        context.add_cookies([{"name": "sessionid", "value": session, "url": live_magi.url}])
        return context.new_page()

    return make


@pytest.fixture
def page(log_in_as):
    return log_in_as()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"rep_{report.when}", report)
    return report


@pytest.fixture(scope="package")
def screenshots(tmp_path_factory):
    """Where the pages' screenshots go: docs/screenshots when MAGI_SCREENSHOTS=docs (how
    the README's pictures are refreshed), else a temporary folder, so a test run leaves
    the working tree as it found it."""
    folder = (
        SCREENSHOTS
        if os.environ.get("MAGI_SCREENSHOTS") == "docs"
        else (tmp_path_factory.mktemp("screenshots"))
    )
    folder.mkdir(parents=True, exist_ok=True)
    return folder
