"""The exceptions MAGI raises for what a user or an operator must read."""


class MagiError(Exception):
    """The one exception type MAGI raises for anything a user or operator must read."""


class InvalidInput(MagiError, ValueError):
    """Input refused, as field path -> messages: `title`, `agents[1].model`,
    `panel.agents[0].model`, `line 3.expected`. The one shape every entry point reports:
    the page shows each message next to its field, the API answers with {"errors": {...}}
    (400 when `breaks_schema`: the input breaks the API's documented schema; else 422, a
    rule the schema cannot express), and a command prints `invalid input: <path>:
    <message>` and exits 2."""

    def __init__(self, errors: dict[str, list[str]], *, breaks_schema: bool = False) -> None:
        self.errors = errors
        self.breaks_schema = breaks_schema
        super().__init__("; ".join(f"{f}: {' '.join(m)}" for f, m in errors.items()))


class Refused(MagiError):
    """Not started because a limit was reached (the judgements a user may start, a
    budget); retry_after in seconds."""

    # What a page or the API answers with it: 429, too many requests (a budget: 402).
    status_code = 429

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


class NotFound(MagiError):
    """What is asked for does not exist, or is not the caller's to see (another team's
    looks the same: HTTP 404, never 403)."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Forbidden(MagiError):
    """The caller sees it but may not do this to it (HTTP 403): an example panel for
    anyone but staff, an operation only staff may make."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Conflict(MagiError):
    """Its state forbids the change (HTTP 409): a suite with evaluation runs."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)
