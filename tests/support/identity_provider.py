"""The sign-in tests' OpenID Connect provider (tests/support/oidc_provider/), migrated
on a fresh SQLite file with a fresh RS256 key and served by daphne on 127.0.0.1 in a
process of its own; `control` drives its /control/ endpoints."""

import html
import http.cookiejar
import json
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support.live_site import REPO, free_port, wait_until_serving

PROVIDER_PASSWORD = "provider password"


class SentBack(Exception):
    """The provider redirected away from itself: to `url`, the client's callback."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.url = url


class ProviderRedirectsOnly(urllib.request.HTTPRedirectHandler):
    """Follows the provider's redirects within the provider; stops at the first one
    elsewhere (the client's callback), which SentBack carries."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if not newurl.startswith(self.origin + "/"):
            raise SentBack(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class IdentityProvider:
    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="magi-oidc-"))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.issuer = f"{self.url}/o"
        self.log_path = self.dir / "provider.log"
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (self.dir / "key.pem").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        self.env = {
            "PATH": "/usr/bin:/bin",
            "DJANGO_SETTINGS_MODULE": "tests.support.oidc_provider.settings",
            "PROVIDER_DB": str(self.dir / "provider.sqlite3"),
            "PROVIDER_KEY": str(self.dir / "key.pem"),
            "PROVIDER_ISSUER": self.issuer,
            "PYTHONUNBUFFERED": "1",
        }
        self.process: subprocess.Popen | None = None

    def start(self, ready_within: float = 30.0) -> "IdentityProvider":
        if not (self.dir / "provider.sqlite3").exists():
            subprocess.run(
                [sys.executable, "-m", "django", "migrate", "--no-input", "-v", "0"],
                cwd=REPO,
                env=self.env,
                check=True,
                capture_output=True,
                timeout=120,
            )
        daphne = Path(sys.executable).with_name("daphne")
        app = "tests.support.oidc_provider.asgi:application"
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [str(daphne), "-b", "127.0.0.1", "-p", str(self.port), app],
                cwd=REPO,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        discovery = f"{self.issuer}/.well-known/openid-configuration"
        wait_until_serving(
            self.process, discovery, ready_within, "the provider", self.stop, self.log
        )
        return self

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-5000:]
        except FileNotFoundError:
            return ""

    def control(self, what: str, **data: Any) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{self.url}/control/{what}",
            data=json.dumps(data).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def person(
        self, username: str, groups: list[str], *, email_verified: bool = True, email: str = ""
    ) -> str:
        """A person at the provider; their subject (the ID token's `sub`)."""
        answer = self.control(
            "user",
            username=username,
            password=PROVIDER_PASSWORD,
            email=email or f"{username}@example.com",
            email_verified=email_verified,
            name=f"{username.title()} Tester",
            groups=groups,
        )
        return str(answer["sub"])

    def register(self, client_id: str, secret: str, magi_url: str) -> None:
        self.control(
            "client",
            client_id=client_id,
            client_secret=secret,
            redirect_uri=f"{magi_url}/accounts/oidc/callback/",
            post_logout_redirect_uri=f"{magi_url}/accounts/login/",
        )

    def misbehave(self, kind: str) -> None:
        """The next ID token is wrong this way: tampered, audience, expired, nonce, issuer."""
        self.control("mischief", kind=kind)

    def authorize(self, authorize_url: str, username: str) -> str:
        """What a browser does at the provider, without one: from the authorization URL a
        client sent it to, through the provider's login form as `username`. Returns the
        URL the provider sends it back to (the client's callback with the code and
        state), not followed."""
        opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()),
            ProviderRedirectsOnly(self.url),
        )
        try:
            with opener.open(authorize_url, timeout=10) as page:
                login_url, form = page.url, page.read().decode()
            fields = dict(re.findall(r'name="(csrfmiddlewaretoken|next)" value="([^"]*)"', form))
            answer = urlencode(
                {
                    "csrfmiddlewaretoken": fields["csrfmiddlewaretoken"],
                    "next": html.unescape(fields["next"]),
                    "username": username,
                    "password": PROVIDER_PASSWORD,
                }
            )
            opener.open(login_url, data=answer.encode(), timeout=10)
        except SentBack as back:
            return back.url
        raise AssertionError(f"the provider did not send {username} back: {self.log()}")


def sign_in_with_client(client: Any, provider: IdentityProvider, username: str) -> Any:
    """A whole sign-in through `provider` with Django's test client (MAGI's side) and
    IdentityProvider.authorize (the provider's): MAGI's answer to the callback."""
    started = client.post("/accounts/oidc/start/")
    back = urlsplit(provider.authorize(started["Location"], username))
    return client.get(f"{back.path}?{back.query}")
