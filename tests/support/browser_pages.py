"""The viewport sizes and page checks the browser tests share."""

DESKTOP = {"width": 1280, "height": 900}


PHONE = {"width": 360, "height": 780}


def watch_violations(context) -> list[str]:
    """Collect the policy violations of every page of this context: the DOM events and
    Chromium's console messages about them."""
    violations: list[str] = []
    context.expose_binding("reportViolation", lambda source, text: violations.append(text))
    context.add_init_script(REPORT_VIOLATIONS)
    context.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return violations


# Reported from inside the page for every blocked script, style or connection.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`
    + ` at ${event.documentURI}`);
});
"""
