"""The servers' garbage-collector settings (condor/gc_settings.py) are applied by both entry points.

Each import runs in a subprocess: the settings are process-wide, and the suite's own process
should keep Python's.
"""

import os
import subprocess
import sys

import pytest

from condor.gc_settings import YOUNGEST_THRESHOLD

PROBE = (
    "import gc, sys, {module}; "
    "print(gc.get_freeze_count(), gc.get_threshold()[0], int('sessions_app.message_views' in sys.modules))"
)


@pytest.mark.parametrize("module", ["condor.wsgi", "condor.asgi"])
def test_the_entry_point_freezes_the_loaded_app_and_raises_the_youngest_threshold(module):
    process = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "condor.settings"},
    )
    assert process.returncode == 0, process.stderr[-2000:]

    frozen, threshold, views_loaded = map(int, process.stdout.split())
    assert frozen > 50_000 and views_loaded  # the application, views included (the URLconf is imported first)
    assert threshold == YOUNGEST_THRESHOLD
