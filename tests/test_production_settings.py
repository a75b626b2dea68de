"""Production settings from the environment (issue 9, items 8 and 9).

`manage.py check --deploy` must be clean with the production environment the
README documents (read from the README itself, so the two cannot drift apart),
and every page is served under a Content-Security-Policy that allows nothing
inline.
"""

import functools
import json
import re
import secrets
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_settings_env import ROOT, start

README = ROOT / "README.md"


def documented_production_environment() -> dict[str, str]:
    """The `sh` block after README's 'In production, behind a proxy' paragraph, as a dict (comments dropped)."""
    text = README.read_text()
    block = re.search(r"In production, behind a proxy.*?```sh\n(.*?)```", text, re.DOTALL)
    assert block, "README documents no production environment"
    env = {}
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        if words:
            name, _, value = words[0].partition("=")
            env[name] = value
    return env


def check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    environment = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "condor.settings", **env}
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def production_env() -> dict[str, str]:
    env = documented_production_environment()
    assert "SECRET_KEY" in env
    env["SECRET_KEY"] = secrets.token_urlsafe(50)  # the README shows where to get one
    return env


def test_check_deploy_is_clean_with_the_documented_production_environment(production_env):
    process = check_deploy(production_env)
    assert process.returncode == 0, process.stdout + process.stderr
    assert "System check identified no issues" in process.stdout


def test_check_deploy_fails_without_a_documented_setting(production_env):
    del production_env["SECURE_SSL_REDIRECT"]
    process = check_deploy(production_env)
    assert process.returncode != 0
    assert "security.W" in process.stderr + process.stdout


PROBE = """
import json
from django.conf import settings
print(json.dumps({name: getattr(settings, name) for name in (
    "SECURE_PROXY_SSL_HEADER", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS",
    "SESSION_COOKIE_AGE", "AXES_FAILURE_LIMIT", "CONDOR_THROTTLE_RATES", "CONDOR_MAX_PENDING_PER_CLIENT",
)}, default=str))
"""


def loaded(**env) -> dict:
    process = start(PROBE, **env)
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout.strip().splitlines()[-1])


@functools.cache
def defaults() -> dict:
    return loaded()


def test_development_defaults_keep_plain_http_working():
    settings = defaults()
    assert settings["SECURE_PROXY_SSL_HEADER"] is None
    assert settings["SESSION_COOKIE_SECURE"] is False and settings["CSRF_COOKIE_SECURE"] is False
    assert settings["SECURE_HSTS_SECONDS"] == 0


def test_the_proxy_header_is_read_as_django_wants_it():
    settings = loaded(SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto: https")
    assert settings["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]


def test_redirecting_to_https_makes_the_cookies_secure():
    settings = loaded(SECURE_SSL_REDIRECT="1")
    assert settings["SESSION_COOKIE_SECURE"] is True and settings["CSRF_COOKIE_SECURE"] is True


def test_abuse_limits_have_sane_defaults():
    settings = defaults()
    assert settings["SESSION_COOKIE_AGE"] == 8 * 3600
    assert settings["AXES_FAILURE_LIMIT"] == 5
    assert settings["CONDOR_THROTTLE_RATES"] == {"default": [1200, 60], "gate": [3000, 60]}
    assert settings["CONDOR_MAX_PENDING_PER_CLIENT"] == 500


def test_abuse_limits_are_read_from_the_environment():
    settings = loaded(
        CONDOR_SESSION_AGE_SECONDS="3600",
        CONDOR_LOGIN_FAILURE_LIMIT="3",
        CONDOR_THROTTLE_RATE="10/s",
        CONDOR_THROTTLE_RATE_GATE="off",
        CONDOR_MAX_PENDING_PER_CLIENT="50",
    )
    assert settings["SESSION_COOKIE_AGE"] == 3600
    assert settings["AXES_FAILURE_LIMIT"] == 3
    assert settings["CONDOR_THROTTLE_RATES"] == {"default": [10, 1], "gate": None}
    assert settings["CONDOR_MAX_PENDING_PER_CLIENT"] == 50


# --- Content-Security-Policy -----------------------------------------------------------------


def policy(response) -> dict[str, list[str]]:
    directives = [part.split() for part in response["Content-Security-Policy"].split(";") if part.strip()]
    return {name: values for name, *values in directives}


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_sign_in_pages_allow_no_inline_script_or_style(client, db, path):
    csp = policy(client.get(path))
    assert csp["script-src"] == ["'self'"] and csp["style-src"] == ["'self'"]
    assert csp["frame-ancestors"] == ["'none'"] and csp["object-src"] == ["'none'"]


def test_the_inbox_is_served_under_the_policy(reviewer_http):
    assert policy(reviewer_http.get("/inbox/"))["connect-src"] == ["'self'"]


def test_the_admin_is_served_under_the_policy(carl):
    from tests.governance.test_admin import admin_client

    assert policy(admin_client(carl).get("/admin/approvals/approval/"))["script-src"] == ["'self'"]


TEMPLATES = sorted((ROOT / "templates").rglob("*.html"))
INLINE = {
    "an inline script": re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE),
    "a style attribute": re.compile(r"\sstyle\s*=", re.IGNORECASE),
    "an event handler attribute": re.compile(r"\son[a-z]+\s*=", re.IGNORECASE),
    "a javascript: URL": re.compile(r"javascript:", re.IGNORECASE),
}


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda path: str(path.relative_to(ROOT)))
def test_no_template_has_anything_the_policy_would_block(template: Path):
    text = template.read_text()
    for what, pattern in INLINE.items():
        assert not pattern.search(text), f"{template.name} has {what}; the Content-Security-Policy blocks it"
