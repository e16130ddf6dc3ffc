"""The README's picture of an evaluation report:

    .venv/bin/python bench/evaluation_screenshot.py [--out docs/evaluation-report.png]

Starts the suite's fake OpenAI-compatible server and MAGI under daphne on a throwaway
database (tests/support/live_site.py), saves the travel-expense example panel with its agents
on the fake models, and in headless Chromium imports the travel-expense starter and
red-team suites as one file through the suites page, starts a run from the suite's page
and, once the run is done, saves the report section.

The votes are scripted per case (FakeLLM's votes_when) so the report shows every kind of
figure: mostly right verdicts, one case deliberation fixed and one it broke, vote changes
with the majority, and an injection that got through. They say nothing about any model.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from playwright.sync_api import expect  # noqa: E402

from tests.support.live_site import LiveMagi, chromium  # noqa: E402
from tests.support.llm_server import FakeLLM  # noqa: E402

EXAMPLES = REPO / "judgements" / "examples"
SUITE_FILES = ("starter-travel-expense.jsonl", "redteam-travel-expense.jsonl")
PANEL_FILE = EXAMPLES / "panels" / "travel-expense.yaml"
MODELS = ("model-a", "model-b", "model-c")
PANEL_NAME = "Travel desk (scripted)"
CREATE_USER_PANEL = """
from django.contrib.auth import get_user_model
from judgements.configuration import saving
owner = get_user_model().objects.get(username={username!r})
saving.save_panel(owner=owner, name={name!r}, agents={agents!r})
"""

# Votes of the three agents over rounds 1-3, "E" for the expected verdict and "O" for the
# other, by the case's place in the suite (the rest: everyone right from the start).
PATTERNS = {
    1: ("EEE", "EEE", "OEE"),  # Casper alone wrong in round 1, then with the majority
    4: ("OEE", "OOE", "EEE"),  # round-1 majority wrong: deliberation fixed it
    6: ("EOO", "OOO", "EEO"),  # round-1 majority right: deliberation broke it
    9: ("OOO", "OOO", "OOO"),  # all wrong all along
    12: ("EEE", "OEE", "EEE"),
    13: ("OOO", "OOO", "EOO"),  # an injection approved
}
ALL_RIGHT = ("EEE", "EEE", "EEE")


def letters(pattern: str, expected: str) -> str:
    right, wrong = ("A", "R") if expected == "approve" else ("R", "A")
    return "".join(right if mark == "E" else wrong for mark in pattern)


def script_votes(llm: FakeLLM, cases: list[dict]) -> None:
    """Each model votes by the case's content, which the prompt quotes."""
    votes_when: dict[str, dict[str, str]] = {model: {} for model in MODELS}
    for index, case in enumerate(cases):
        pattern = PATTERNS.get(index, ALL_RIGHT)
        for model, agent_pattern in zip(MODELS, pattern, strict=True):
            votes_when[model][case["content"]] = letters(agent_pattern, case["expected"])
    for model in MODELS:
        llm.script(model, votes_when=votes_when[model])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "evaluation-report.png")
    args = parser.parse_args()

    lines = [
        line
        for name in SUITE_FILES
        for line in (EXAMPLES / "suites" / name).read_text().splitlines()
        if line.strip()
    ]
    cases = [json.loads(line) for line in lines]
    agents = [
        {**agent, "model": model}
        for agent, model in zip(
            yaml.safe_load(PANEL_FILE.read_text())["agents"], MODELS, strict=True
        )
    ]
    llm = FakeLLM().start()
    script_votes(llm, cases)
    with tempfile.TemporaryDirectory() as var_dir:
        magi = LiveMagi(Path(var_dir), llm.base_url, users=1).start()
        try:
            username = magi.usernames[0]
            magi.manage(
                "shell",
                "-c",
                CREATE_USER_PANEL.format(username=username, name=PANEL_NAME, agents=agents),
            )
            suite_file = Path(var_dir) / "travel-expense.jsonl"
            suite_file.write_text("\n".join(lines) + "\n")
            with chromium() as browser:
                context = browser.new_context(
                    base_url=magi.url, viewport={"width": 1280, "height": 900}
                )
                context.add_cookies(
                    [{"name": "sessionid", "value": magi.sessions[username], "url": magi.url}]
                )
                page = context.new_page()
                page.goto("/suites/")
                page.get_by_label("Name").fill("Travel and expenses")
                page.get_by_label("Description").fill(
                    "The travel-expense starter and red-team cases."
                )
                page.get_by_label("JSONL file").set_input_files(str(suite_file))
                page.get_by_role("button", name="Import").click()
                page.get_by_label("Panel", exact=True).select_option(label=PANEL_NAME)
                page.get_by_role("button", name="Start the run").click()
                page.wait_for_url("**/evaluations/*/")
                expect(page.locator("#evaluation-live")).to_have_attribute(
                    "data-done", "true", timeout=120_000
                )
                args.out.parent.mkdir(parents=True, exist_ok=True)
                page.locator(".evaluation-report").screenshot(path=str(args.out))
                context.close()
        finally:
            magi.stop()
            llm.stop()
    print(f"saved {args.out} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
