"""`CI=1 make test` fails on any skip (tests/ci_skips.py)."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_pytest(tmp_path, body: str, *, ci: bool) -> int:
    (tmp_path / "test_sample.py").write_text(body)
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    if ci:
        env["CI"] = "true"
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:django",
            "-p",
            "no:cacheprovider",
            "-p",
            "tests.ci_skips",
            "-c",
            os.devnull,
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    ).returncode


SKIPPING = "import pytest\n\ndef test_passes():\n    pass\n\n@pytest.mark.skip(reason='no node')\ndef test_skipped():\n    pass\n"


def test_a_skip_fails_the_run_under_ci(tmp_path):
    assert run_pytest(tmp_path, SKIPPING, ci=True) == 1


def test_a_skip_is_only_a_skip_outside_ci(tmp_path):
    assert run_pytest(tmp_path, SKIPPING, ci=False) == 0


def test_a_clean_run_passes_under_ci(tmp_path):
    assert run_pytest(tmp_path, "def test_passes():\n    pass\n", ci=True) == 0


OUR_PACKAGES = (
    "condor",
    "demo",
    "governance",
    "inbox",
    "approvals",
    "runs",
    "sessions_app",
    "registry",
    "audit",
    "agents",
    "core",
    "tests",
    "condor_client",
)


def test_our_own_modules_are_imported_plainly():
    # importorskip turns a broken import of our own code into a skip; a plain import fails.
    offenders = [
        f"{path.relative_to(REPO)}:{number}"
        for path in (REPO / "tests").rglob("*.py")
        if "node_modules" not in path.parts
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "importorskip(" in line and any(f'"{package}' in line or f"'{package}" in line for package in OUR_PACKAGES)
    ]
    assert offenders == []
