# whitenoise (6.x) ships no types: what a middleware finds for a path, passed back to
# serve() (whitenoise/responders.py); our code only hands them on.

import os
from collections.abc import Iterable, Mapping

class StaticFile:
    def __init__(
        self,
        path: str,
        headers: Iterable[tuple[str, str]],
        encodings: Mapping[str, str] | None = None,
        stat_cache: Mapping[str, os.stat_result] | None = None,
    ) -> None: ...

class Redirect:
    def __init__(self, location: str, headers: Mapping[str, str] | None = None) -> None: ...
