"""Node.js and the real `ai` npm package (tests/node_modules, installed by `make test`)."""

import shutil
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parents[1]
NODE = shutil.which("node")

# A skip, which fails the run under CI=1 (tests/ci_skips.py).
needs_ai_client = pytest.mark.skipif(
    NODE is None or not (TESTS_DIR / "node_modules" / "ai").is_dir(),
    reason="needs node and tests/node_modules (cd tests && npm ci)",
)
