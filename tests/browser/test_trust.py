"""The verdict's mark in a real browser against a live daphne (issue 34): a panel with no
certificate never reads "Not contested"; its finished judgement says, live and after a
reload, that its trust is not measured. A panel is certified from its page, and the
run report draws its certificate's curve; axe finds nothing on either page."""

import re

from playwright.sync_api import expect

from tests.support.axe_core import describe, violations
from tests.support.browser_evaluations import AGENTS as PANEL
from tests.support.browser_evaluations import CASES, CREATE_PANEL, IMPORT_SUITE, PANEL_NAME, jsonl
from tests.support.browser_pages import PHONE, watch_violations
from tests.support.live_page import AGENTS
from tests.support.live_site import fill_judgement


def test_a_finished_judgement_of_an_uncertified_panel_says_trust_is_not_measured(page, llm):
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="AAA")  # unanimous: no signal of doubt
    page.goto("/")
    fill_judgement(page, "Team offsite in Porto", "Offsite for 6 people, 2 nights.", AGENTS)
    page.get_by_role("button", name="Judge").click()
    page.wait_for_url("**/judgements/*/")

    # Live, without a reload, then as the page draws it.
    for _ in ("live", "reloaded"):
        expect(page.locator("#judgement-status")).to_have_attribute("data-status", "approved")
        outcome = page.locator("#judgement-outcome")
        mark = outcome.locator('[data-trust="unmeasured"]')
        expect(mark.get_by_role("heading")).to_have_text("Trust not measured for this panel")
        expect(mark).to_contain_text(
            "No certificate holds for these agents, so nobody knows how often a verdict "
            "like this is right."
        )
        expect(outcome).not_to_contain_text("Not contested")
        expect(outcome.locator(".check-findings")).to_contain_text("Confidence from the answers")
        page.reload()


CERTIFY = """
from judgements.models import Certificate, Panel
from judgements.panels.variant_setting import fingerprint_of
panel = Panel.objects.get(owner__username={username!r}, name={name!r})
Certificate.objects.create(
    panel=panel, agents=panel.agents, fingerprint=fingerprint_of(panel),
    runs=[], target=0.9, delta=0.1, samples=28, certified=True,
    rule={{"source": "answer", "threshold": 0.95, "absent": []}},
    coverage=25 / 28, accuracy=1.0, bound=0.912, kept=25,
    curve=[
        {{"threshold": 0.6, "coverage": 1.0, "accuracy": 25 / 28, "bound": 0.81}},
        {{"threshold": 0.8, "coverage": 0.95, "accuracy": 0.96, "bound": 0.86}},
        {{"threshold": 0.95, "coverage": 25 / 28, "accuracy": 1.0, "bound": 0.912}},
    ],
)
"""


def test_a_panel_is_certified_from_its_page_and_its_curve_drawn_on_the_report(
    new_context, usernames, live_magi, llm, screenshots
):
    username = usernames()
    live_magi.manage(
        "shell", "-c", CREATE_PANEL.format(username=username, name=PANEL_NAME, agents=PANEL)
    )
    live_magi.manage("shell", "-c", IMPORT_SUITE.format(username=username, data=jsonl(CASES)))
    context = new_context()
    policy_violations = watch_violations(context)
    context.add_cookies(
        [{"name": "sessionid", "value": live_magi.sessions[username], "url": live_magi.url}]
    )
    page = context.new_page()
    for model in ("model-a", "model-b", "model-c"):
        llm.script(model, votes="AAA")

    # A finished run of the panel to measure it on.
    page.goto("/suites/")
    page.get_by_role("link", name="Slow cases").click()
    page.get_by_label("Panel", exact=True).select_option(label=PANEL_NAME)
    page.get_by_role("button", name="Start the run").click()
    page.wait_for_url(re.compile(r"/evaluations/\d+/$"))
    run_url = page.url
    expect(page.locator("#run-progress-text")).to_have_text("3 of 3 judged")

    # From the panel list to its certificate: a bad target is refused beside the field,
    # what was typed kept; then the panel is measured.
    page.goto("/panels/")
    page.get_by_role("link", name=f"Certify {PANEL_NAME}").click()
    certify = page.locator("#certify")
    expect(certify).to_contain_text("Not certified: run it over labelled suites, then certify.")
    certify.get_by_label("Target accuracy (%)").fill("150")
    certify.get_by_role("button", name="Certify this panel").click()
    expect(certify.locator("#id_certify-target_error")).to_have_text(
        "Must be above 0 and below 100 (a percentage)."
    )
    expect(certify.get_by_label("Target accuracy (%)")).to_have_value("150")
    certify.get_by_label("Target accuracy (%)").fill("90")
    certify.get_by_role("button", name="Certify this panel").click()
    expect(page.locator(".panel-messages")).to_contain_text(
        f"Measured the panel {PANEL_NAME}: No rule reaches 90% accuracy"
    )
    expect(certify.locator('[data-certificate="not_certified"]')).to_contain_text(
        "No rule reaches 90 %: the first rule tested reached a bound of"
    )
    found = violations(page)
    assert not found, describe(found)
    page.screenshot(path=screenshots / "panel-certificate-1280.png", full_page=True)

    # Certified (as `manage.py evaluate --certify` would): the run's report draws the curve.
    live_magi.manage("shell", "-c", CERTIFY.format(username=username, name=PANEL_NAME))
    page.goto(run_url)
    chart = page.get_by_role("img", name="Bound and coverage against the confidence threshold")
    expect(chart).to_be_visible()
    expect(chart.locator(".curve-label-target")).to_have_text("target 90 %")
    expect(chart.locator(".curve-label-bound")).to_have_text("bound 91.2 %")
    expect(page.locator(".report-headline.trust-headline")).to_contain_text(
        "Without a doubt signal:"
    )
    found = violations(page)
    assert not found, describe(found)
    assert policy_violations == []
    chart.screenshot(path=screenshots / "run-certificate-chart-1280.png")
    # On a phone the chart shrinks to the screen; the page never scrolls sideways.
    page.set_viewport_size(PHONE)
    page.reload()
    expect(chart).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
