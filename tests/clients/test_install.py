"""`pip install ./clients/python` into a fresh virtualenv: it installs, imports without Django, and works.

Downloads the build backend and httpx from PyPI, like a user's install would.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "python"

AGENT = textwrap.dedent("""
    import importlib.util, sys
    from condor_client import Condor
    assert importlib.util.find_spec("django") is None, "django is importable in the fresh venv"
    with Condor(sys.argv[1], sys.argv[2]) as condor:
        with condor.session(autonomy="autonomous", age_band="adult").run() as run:
            print(run.gate("record_vitals", {"heart_rate": 72}, op="create").rule_id)
""")


@pytest.mark.timeout(400)
def test_the_client_installs_into_a_fresh_venv_and_gates_without_django(tmp_path, live_agent):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(CLIENT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    gated = subprocess.run(
        [str(python), "-c", AGENT, f"http://{live_agent.host}", live_agent.key],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert gated.returncode == 0, gated.stderr
    assert gated.stdout.strip() == "mutate.low-tier-autonomous-allow"
