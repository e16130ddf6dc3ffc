"""Values as the cells of MAGI's CSV exports (the history's, an evaluation run's): text a
spreadsheet will not run as a formula, and a flag as yes, no or blank. No Django."""


def spreadsheet_safe(value: str) -> str:
    """A cell a spreadsheet would read as a formula ("=", "+", "-", "@") is kept as text
    with a leading apostrophe (OWASP's advice for CSV injection)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def yes_no(value: bool | None) -> str:
    """A flag as a CSV cell: "yes", "no", or empty when it is not known yet."""
    return "" if value is None else ("yes" if value else "no")
