"""Dependencies run one way, condor ← sessions_app ← runs ← approvals (STYLE.md): sessions_app imports neither later app.

What sessions_app needs from runs comes through sessions_app/extensions.py, its audit
rows through condor/audit.py. Migrations are left out: they name other apps' models
by label, as Django writes them.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LATER_APPS = {"runs", "approvals"}


def imported_modules(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


@pytest.mark.parametrize("path", sorted(path.relative_to(ROOT) for path in (ROOT / "sessions_app").rglob("*.py")
                                        if "migrations" not in path.parts), ids=str)
def test_sessions_app_imports_no_later_app(path):
    later = [name for name in imported_modules(ROOT / path) if name.split(".")[0] in LATER_APPS]
    assert later == []
