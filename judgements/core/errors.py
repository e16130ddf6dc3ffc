"""The exceptions MAGI raises for what a user or an operator must read."""


class MagiError(Exception):
    """The one exception type MAGI raises for anything a user or operator must read."""


class InvalidInput(MagiError, ValueError):
    """Input refused, as field path -> messages: `title`, `agents[1].model`,
    `panel.agents[0].model`, `line 3.expected`. The one shape every entry point reports:
    the page shows each message next to its field, the API answers 400 (or 422) with
    {"errors": {...}}, and a command prints `invalid input: <path>: <message>` and exits 2."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{f}: {' '.join(m)}" for f, m in errors.items()))
