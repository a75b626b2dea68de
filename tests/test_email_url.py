"""EMAIL_URL (SPEC section 10): escalation emails go through SMTP when it is set.

`core.env.env_email` reads the URL; the settings use it, or the console backend
without it (`make run`). Start-up fails on a URL it cannot read, without echoing
the password.
"""

import json

import pytest
from django.core.exceptions import ImproperlyConfigured

from core.env import env_email
from tests.test_settings_env import start

EMAIL_PROBE = """
import json
from django.conf import settings
print(json.dumps({key: getattr(settings, key, None) for key in (
    "EMAIL_BACKEND", "EMAIL_HOST", "EMAIL_PORT", "EMAIL_HOST_USER", "EMAIL_USE_TLS")}))
"""


def email_settings(**env) -> dict:
    process = start(EMAIL_PROBE, **env)
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout.strip().splitlines()[-1])


def test_a_url_gives_smtp_with_starttls(monkeypatch):
    monkeypatch.setenv("EMAIL_URL", "smtp://alerts%40ward.example:p%40ss:w0rd@mail.example:587/?tls=1&timeout=10")
    assert env_email("EMAIL_URL") == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "mail.example",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "alerts@ward.example",
        "EMAIL_HOST_PASSWORD": "p@ss:w0rd",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": 10,
    }


def test_smtps_is_implicit_tls_on_465(monkeypatch):
    monkeypatch.setenv("EMAIL_URL", "smtps://mail.example")
    email = env_email("EMAIL_URL")
    assert (email["EMAIL_PORT"], email["EMAIL_USE_SSL"], email["EMAIL_USE_TLS"]) == (465, True, False)
    assert (email["EMAIL_HOST_USER"], email["EMAIL_HOST_PASSWORD"], email["EMAIL_TIMEOUT"]) == ("", "", None)


def test_unset_or_empty_is_none(monkeypatch):
    monkeypatch.delenv("EMAIL_URL", raising=False)
    assert env_email("EMAIL_URL") is None
    monkeypatch.setenv("EMAIL_URL", " ")
    assert env_email("EMAIL_URL") is None


@pytest.mark.parametrize(
    "url",
    [
        "http://mail.example",
        "smtp://",
        "smtp://mail.example:port",
        "smtp://mail.example/?tls=maybe",
        "smtp://mail.example/?starttls=1",
        "smtp://mail.example/?timeout=soon",
        "smtps://mail.example/?tls=1",
    ],
)
def test_a_url_it_cannot_read_is_refused(monkeypatch, url):
    monkeypatch.setenv("EMAIL_URL", url)
    with pytest.raises(ImproperlyConfigured, match="EMAIL_URL"):
        env_email("EMAIL_URL")


def test_the_settings_use_smtp_when_email_url_is_set():
    loaded = email_settings(EMAIL_URL="smtp://condor:secret@mail.example:587/?tls=1")
    assert loaded == {
        "EMAIL_BACKEND": "django.core.mail.backends.smtp.EmailBackend",
        "EMAIL_HOST": "mail.example",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "condor",
        "EMAIL_USE_TLS": True,
    }


def test_without_email_url_mail_goes_to_the_console():
    assert email_settings()["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"


def test_a_bad_email_url_stops_start_up_without_showing_the_password():
    process = start(EMAIL_URL="smtp://condor:hunter2@mail.example:port/")
    assert process.returncode != 0
    assert "EMAIL_URL" in process.stderr
    assert "hunter2" not in process.stderr
