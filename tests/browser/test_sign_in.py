"""OpenID Connect sign-in end to end: a real provider (django-oauth-toolkit, its own
process, tests/support/identity_provider.py), MAGI under daphne configured for it, and
Chromium through the redirect flow. Every refusal shows a page that says why and leaves
no user, identity or session behind."""

import json
import sqlite3
import time
import urllib.error
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.support.identity_provider import PROVIDER_PASSWORD, IdentityProvider
from tests.support.live_site import PASSWORD, LiveMagi

CLIENT_ID = "magi-tests"
SECRET = "magi-tests-client-secret"
GROUPS = "magi-fraud=Fraud:member,magi-fraud-reviewers=Fraud:reviewer,magi-admins=staff"

# The team's judgement and panel, a local user whose email a provider account shares,
# the break-glass superuser and a bot's API token.
SEED = f"""
from django.contrib.auth.models import User
from judgements.models import ApiToken, Judgement, Panel, Team
team = Team.objects.create(name="Fraud")
agents = [dict(name=n, model="model-a", criteria="c") for n in ("A", "B", "C")]
Panel.objects.create(name="Fraud panel", team=team, agents=agents)
Judgement.objects.create(title="Fraud team's case", content="x", team=team)
User.objects.create_user("grace", email="grace@example.com", password={PASSWORD!r})
User.objects.create_superuser("root", email="root@example.com", password={PASSWORD!r})
bot = User.objects.create_user("bot")
print(ApiToken.issue(bot, "bot")[1])
"""


def oidc_magi(tmp_path_factory, llm_url: str, provider: IdentityProvider) -> LiveMagi:
    magi = LiveMagi(
        tmp_path_factory.mktemp("magi-oidc"),
        llm_url,
        MAGI_OIDC_ISSUER=provider.issuer,
        MAGI_OIDC_CLIENT_ID=CLIENT_ID,
        MAGI_OIDC_CLIENT_SECRET=SECRET,
        MAGI_OIDC_GROUPS=GROUPS,
        MAGI_OIDC_PROVIDER_NAME="Test IdP",
        MAGI_OIDC_BREAK_GLASS_USER="root",
    )
    provider.register(CLIENT_ID, SECRET, magi.url)
    magi.var_dir.mkdir(parents=True, exist_ok=True)
    magi.prepare()
    magi.token = magi.manage("shell", "-v", "0", "-c", SEED).strip().splitlines()[-1]
    return magi.serve()


@pytest.fixture(scope="module")
def provider():
    server = IdentityProvider().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def magi(provider, gated_llm, tmp_path_factory):
    site = oidc_magi(tmp_path_factory, gated_llm.base_url, provider)
    yield site
    site.stop()


@pytest.fixture
def fresh_page(browser, magi):
    contexts = []

    def make():
        context = browser.new_context(base_url=magi.url)
        context.set_default_timeout(10_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def query(magi: LiveMagi, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(f"file:{magi.db_path}?mode=ro", uri=True) as db:
        return db.execute(sql, args).fetchall()


def users_with_email(magi: LiveMagi, email: str) -> int:
    return query(magi, "SELECT count(*) FROM auth_user WHERE email = ?", email)[0][0]


def teams_of(magi: LiveMagi, email: str) -> list[str]:
    rows = query(
        magi,
        "SELECT t.name FROM judgements_membership m JOIN judgements_team t ON t.id = m.team_id"
        " JOIN auth_user u ON u.id = m.user_id WHERE u.email = ? ORDER BY t.name",
        email,
    )
    return [name for (name,) in rows]


def sign_in(page, username: str, start: str = "/judgements/") -> None:
    """From a page that needs a login, through the provider's login form and back."""
    page.goto(start)
    page.get_by_role("button", name="Sign in with Test IdP").click()
    page.get_by_label("Provider username").fill(username)
    page.get_by_label("Provider password").fill(PROVIDER_PASSWORD)
    page.get_by_role("button", name="Sign in at the provider").click()


def expect_refused(page, reason: str) -> None:
    expect(page.get_by_role("heading", name="Sign-in refused")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text(reason)


def expect_signed_out(page) -> None:
    page.goto("/judgements/")
    expect(page.get_by_role("button", name="Sign in with Test IdP")).to_be_visible()


def test_a_member_lands_on_the_history_with_their_teams_judgements(magi, provider, fresh_page):
    provider.person("alice", ["magi-fraud", "unrelated"])
    page = fresh_page()
    sign_in(page, "alice")
    page.wait_for_url("**/judgements/")
    expect(page.get_by_role("link", name="Fraud team's case")).to_be_visible()
    assert teams_of(magi, "alice@example.com") == ["Fraud"]
    audit = query(magi, "SELECT actor, after FROM judgements_auditentry WHERE after LIKE '%alice%'")
    assert audit and audit[-1][0] == provider.issuer
    # The session bound: MAGI_OIDC_SESSION_SECONDS (8 hours), not Django's two weeks.
    (session,) = [c for c in page.context.cookies() if c["name"] == "sessionid"]
    assert 8 * 3600 - 300 < session["expires"] - time.time() <= 8 * 3600


def test_a_reviewer_sees_the_review_queue(magi, provider, fresh_page):
    provider.person("bob", ["magi-fraud-reviewers"])
    page = fresh_page()
    sign_in(page, "bob", start="/reviews/")
    page.wait_for_url("**/reviews/")
    expect(page.get_by_role("heading", name="Review queue")).to_be_visible()


def test_a_group_removed_at_the_provider_removes_the_team_at_the_next_sign_in(
    magi, provider, fresh_page
):
    provider.person("carol", ["magi-fraud"])
    page = fresh_page()
    sign_in(page, "carol")
    page.wait_for_url("**/judgements/")
    assert teams_of(magi, "carol@example.com") == ["Fraud"]
    # Signing out ends the provider's session too: the next sign-in asks for a password.
    page.get_by_role("button", name="Log out").click()
    page.wait_for_url("**/accounts/login/**")
    provider.person("carol", ["magi-admins"])
    sign_in(page, "carol")
    page.wait_for_url("**/judgements/")
    expect(
        page.get_by_role("link", name="Fraud team's case")
    ).to_be_visible()  # staff sees everything
    assert teams_of(magi, "carol@example.com") == []
    removal = query(
        magi,
        "SELECT actor FROM judgements_auditentry WHERE before LIKE '%carol%'"
        " AND after NOT LIKE '%carol%'",
    )
    assert removal == [(provider.issuer,)]


def test_a_person_in_no_mapped_group_is_refused(magi, provider, fresh_page):
    provider.person("dave", ["marketing"])
    page = fresh_page()
    sign_in(page, "dave")
    expect_refused(page, "none of your groups gives access to MAGI (your groups: marketing)")
    assert users_with_email(magi, "dave@example.com") == 0
    expect_signed_out(page)


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("tampered", "failed its signature check"),
        ("audience", "issued for another application"),
        ("expired", "has expired"),
        ("nonce", "does not belong to this sign-in"),
        ("issuer", "an issuer MAGI does not trust"),
    ],
)
def test_a_bad_id_token_is_refused_and_nothing_is_stored(magi, provider, fresh_page, fault, reason):
    username = f"eve-{fault}"
    subject = provider.person(username, ["magi-fraud"])
    provider.misbehave(fault)
    page = fresh_page()
    sign_in(page, username)
    expect_refused(page, reason)
    assert users_with_email(magi, f"{username}@example.com") == 0
    assert query(magi, "SELECT id FROM judgements_identity WHERE subject = ?", subject) == []
    expect_signed_out(page)


def test_a_replayed_callback_is_refused(magi, provider, fresh_page):
    provider.person("frank", ["magi-fraud"])
    page = fresh_page()
    with page.expect_request("**/accounts/oidc/callback/**") as callback:
        sign_in(page, "frank")
    page.wait_for_url("**/judgements/")
    page.goto(callback.value.url)  # the same browser, its state used up
    expect_refused(page, "already used")
    replay = fresh_page()
    replay.goto(callback.value.url)
    expect_refused(replay, "already used")
    expect_signed_out(replay)


def test_an_unverified_email_of_a_local_user_is_refused(magi, provider, fresh_page):
    provider.person("grace", ["magi-fraud"], email_verified=False)
    page = fresh_page()
    sign_in(page, "grace")
    expect_refused(page, "does not say the address is verified")
    assert query(magi, "SELECT count(*) FROM judgements_identity") == query(
        magi,
        "SELECT count(*) FROM judgements_identity i JOIN auth_user u ON u.id = i.user_id"
        " WHERE u.email != 'grace@example.com'",
    )
    assert teams_of(magi, "grace@example.com") == []
    expect_signed_out(page)


def test_a_new_signing_key_is_fetched_when_a_token_names_it(magi, provider, fresh_page):
    provider.person("henry", ["magi-fraud"])
    provider.person("irene", ["magi-fraud"])
    first = fresh_page()
    sign_in(first, "henry")
    first.wait_for_url("**/judgements/")
    provider.control("rotate-key")
    second = fresh_page()
    sign_in(second, "irene")
    second.wait_for_url("**/judgements/")
    expect(second.get_by_role("link", name="Fraud team's case")).to_be_visible()


def test_passwords_are_off_but_for_the_break_glass_superuser(magi, fresh_page):
    page = fresh_page()
    page.goto("/accounts/login/")
    page.get_by_text("Break-glass sign-in").click()
    page.get_by_label("Username").fill("grace")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("alert")).to_contain_text("Passwords are off")
    page.get_by_label("Username").fill("root")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out root")).to_be_visible()


def api_status(magi: LiveMagi, token: str) -> int:
    request = urllib.request.Request(
        f"{magi.url}/api/judgements/", headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            json.loads(response.read())
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_with_the_provider_stopped_sign_in_says_so_and_the_rest_works(
    browser, gated_llm, tmp_path_factory
):
    provider = IdentityProvider().start()
    magi = oidc_magi(tmp_path_factory, gated_llm.base_url, provider)
    try:
        provider.stop()
        context = browser.new_context(base_url=magi.url)
        page = context.new_page()
        page.goto("/judgements/")
        page.get_by_role("button", name="Sign in with Test IdP").click()
        expect(page.get_by_role("alert")).to_contain_text(
            f"The sign-in provider at {provider.issuer} cannot be reached"
        )
        assert api_status(magi, magi.token) == 200
        with urllib.request.urlopen(f"{magi.url}/healthz", timeout=10) as response:
            assert response.status == 200
        page.get_by_text("Break-glass sign-in").click()
        page.get_by_label("Username").fill("root")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("button", name="Log out root")).to_be_visible()
        context.close()
    finally:
        magi.stop()
        provider.stop()
