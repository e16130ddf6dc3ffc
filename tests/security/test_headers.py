"""What every response tells the browser: a strict Content-Security-Policy; and MAGI
served over HTTPS behind a TLS proxy (MAGI_HTTPS=1): redirect, HSTS, secure cookies, and a
clean `manage.py check --deploy`."""

import http.client
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.urls import reverse

from tests.support.live_site import PASSWORD
from tests.support.matching import csrf_token

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "templates"
STRONG_SECRET_KEY = "k3Y-for-the-deploy-check-" + "x7Qp" * 12


def policy_of(response) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]
    directives = {}
    for directive in header.split(";"):
        name, *sources = directive.split()
        directives[name] = sources
    return directives


def pages_of_every_kind(judgement) -> list[str]:
    return [
        "/accounts/login/",
        "/",
        "/judgements/",
        f"/judgements/{judgement.pk}/",
        "/admin/",
        reverse("admin:judgements_judgement_changelist"),
        reverse("admin:judgements_judgement_change", args=[judgement.pk]),
        "/healthz",
        "/api/judgements/",
        "/no-such-page/",
    ]


@pytest.mark.django_db
def test_every_response_carries_a_strict_content_security_policy(
    admin_client, admin_user, make_judgement
):
    judgement = make_judgement(creator=admin_user)
    for url in pages_of_every_kind(judgement):
        response = admin_client.get(url, HTTP_HOST="127.0.0.1:8000")
        assert response.status_code < 500, url
        policy = policy_of(response)
        assert policy["default-src"] == ["'self'"], url
        assert policy["script-src"] == ["'self'"], url
        assert policy["style-src"] == ["'self'"], url
        assert policy["object-src"] == ["'none'"], url
        assert policy["frame-ancestors"] == ["'none'"], url
        assert policy["connect-src"] == ["'self'", "ws://127.0.0.1:8000"], url
        assert "unsafe" not in response["Content-Security-Policy"], url


@pytest.mark.django_db
def test_behind_a_tls_proxy_the_page_may_open_only_its_secure_websocket(client, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.ALLOWED_HOSTS = ["magi.example"]
    response = client.get(
        "/accounts/login/", HTTP_HOST="magi.example", secure=False, HTTP_X_FORWARDED_PROTO="https"
    )
    assert policy_of(response)["connect-src"] == ["'self'", "wss://magi.example"]


@pytest.mark.django_db
def test_a_refused_host_gets_the_policy_without_a_websocket(client):
    response = client.get("/accounts/login/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert policy_of(response)["connect-src"] == ["'self'"]


# What a strict policy refuses: inline <script> and <style>, style="" and on*="" attributes,
# javascript: URLs and htmx's own inline handlers (hx-on, which needs eval).
INLINE = re.compile(
    r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\sstyle\s*=|\son[a-z]+\s*=|javascript:|hx-on|hx-vars",
    re.IGNORECASE,
)


def test_no_template_needs_inline_script_or_style():
    templates = sorted(TEMPLATES.rglob("*.html"))
    assert len(templates) > 10
    found = [
        f"{path.relative_to(REPO)}:{text[: match.start()].count(chr(10)) + 1}: {match.group(0)}"
        for path in templates
        for text in [path.read_text()]
        for match in INLINE.finditer(text)
    ]
    assert found == []


def test_the_inline_pattern_catches_what_it_is_meant_to():
    for bad in ('<pre style="x">', "<script>alert(1)</script>", '<b onclick="x">', "<style>"):
        assert INLINE.search(bad), bad
    assert not INLINE.search('<script src="/static/x.js" defer></script>')


# --- HTTPS behind a TLS proxy ----------------------------------------------------------


def check_deploy(tmp_path, **env) -> subprocess.CompletedProcess:
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MAGI_", "OPENAI_"))
        and k not in {"DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "ALLOWED_HOSTS"}
    }
    environment.update(
        DJANGO_SETTINGS_MODULE="magi_site.settings",
        SECRET_KEY=STRONG_SECRET_KEY,
        ALLOWED_HOSTS="magi.example",
        MAGI_VAR_DIR=str(tmp_path),
        **env,
    )
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_magi_https(tmp_path):
    result = check_deploy(tmp_path, MAGI_HTTPS="1")
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


def test_without_magi_https_check_deploy_names_the_missing_https_settings(tmp_path):
    result = check_deploy(tmp_path)
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


def request(site, method: str, path: str, headers: dict | None = None, body: str | None = None):
    connection = http.client.HTTPConnection("127.0.0.1", site.port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.headers, response.read().decode()
    finally:
        connection.close()


def test_behind_a_tls_proxy_plain_http_is_redirected_to_https(https_site):
    status, headers, _ = request(https_site, "GET", "/judgements/")
    assert status == 301
    assert headers["Location"] == f"https://127.0.0.1:{https_site.port}/judgements/"
    # A load balancer's plain-HTTP health check is answered, not redirected.
    assert request(https_site, "GET", "/healthz")[0] == 200


def test_behind_a_tls_proxy_it_sends_hsts_and_secure_cookies_and_logs_in(https_site):
    https_site.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; "
        f"get_user_model().objects.create_user('proxied', password={PASSWORD!r})",
    )
    proxied = {"X-Forwarded-Proto": "https", "Host": f"127.0.0.1:{https_site.port}"}
    status, headers, page = request(https_site, "GET", "/accounts/login/", proxied)
    assert status == 200
    assert headers["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    csrf_cookie = next(c for c in headers.get_all("Set-Cookie") if c.startswith("csrftoken="))
    assert "; Secure" in csrf_cookie
    assert f"wss://127.0.0.1:{https_site.port}" in headers["Content-Security-Policy"]

    # Logging in over the proxy works (the CSRF check sees an HTTPS origin) and the session
    # cookie is Secure too.
    token = csrf_token(page)
    status, headers, _ = request(
        https_site,
        "POST",
        "/accounts/login/",
        {
            **proxied,
            "Origin": f"https://127.0.0.1:{https_site.port}",
            "Cookie": csrf_cookie.split(";")[0],
            "Content-Type": "application/x-www-form-urlencoded",
        },
        urlencode({"csrfmiddlewaretoken": token, "username": "proxied", "password": PASSWORD}),
    )
    assert status == 302, headers
    session_cookie = next(c for c in headers.get_all("Set-Cookie") if c.startswith("sessionid="))
    assert "; Secure" in session_cookie and "; HttpOnly" in session_cookie
