"""Time in tests: Condor reads the clock through `timezone.now()`, so tests move that."""

from datetime import timedelta

from django.utils import timezone


def frozen_clock(monkeypatch, at):
    """Make every `timezone.now()` in Condor return `at`."""
    monkeypatch.setattr(timezone, "now", lambda: at)
    return at


def later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)
