"""axe-core, vendored under tests/vendor/axe-core, run on a page in the browser.

The site's Content-Security-Policy allows no inline script, so the checker is added from
its file through Playwright (evaluated as the page's own script, which CSP does not
govern), then asked for every WCAG 2.1 A and AA rule and axe's best practices.
"""

from pathlib import Path

AXE = Path(__file__).resolve().parents[1] / "vendor" / "axe-core" / "axe.min.js"
RULES = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]

RUN_JS = """async ([tags, exclude]) => {
  const context = exclude.length
    ? {include: [document], exclude: exclude.map((s) => [s])}
    : document;
  const result = await axe.run(context, {runOnly: {type: "tag", values: tags}});
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map((n) => n.target.join(" ")),
  }));
}"""


def violations(page, exclude: tuple[str, ...] = ()) -> list[dict]:
    """axe's violations on the page as it stands: id, impact, help and the nodes' selectors.
    `exclude`: selectors of parts that are not MAGI's (Django admin's own markup)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE.read_text(encoding="utf-8"))
    return page.evaluate(RUN_JS, [RULES, list(exclude)])


def describe(found: list[dict]) -> str:
    return "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']} at {', '.join(v['targets'][:5])}" for v in found
    )
