class MagiError(Exception):
    """The one exception type MAGI raises for anything a user or operator must read."""
