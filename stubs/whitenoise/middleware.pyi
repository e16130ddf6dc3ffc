# whitenoise (6.x) ships no types: the part of its Django middleware that
# judgements/web/security.py subclasses and calls, written from whitenoise's source
# (whitenoise/middleware.py, whitenoise/base.py). The rest of whitenoise stays untyped to
# the checker.

from collections.abc import Awaitable, Callable

from django.conf import LazySettings
from django.http import FileResponse, HttpRequest, HttpResponseBase
from whitenoise.responders import Redirect, StaticFile

class WhiteNoiseFileResponse(FileResponse): ...

class WhiteNoiseMiddleware:
    # Django's next handler: sync, or (as our async-capable subclass accepts) async.
    get_response: Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]
    autorefresh: bool
    files: dict[str, StaticFile | Redirect]

    def __init__(
        self,
        get_response: Callable[[HttpRequest], HttpResponseBase | Awaitable[HttpResponseBase]]
        | None = None,
        settings: LazySettings = ...,
    ) -> None: ...
    # Whatever get_response returned, when the path is not a static file.
    def __call__(self, request: HttpRequest) -> HttpResponseBase | Awaitable[HttpResponseBase]: ...
    def find_file(self, url: str) -> StaticFile | Redirect | None: ...
    @staticmethod
    def serve(
        static_file: StaticFile | Redirect, request: HttpRequest
    ) -> WhiteNoiseFileResponse: ...
