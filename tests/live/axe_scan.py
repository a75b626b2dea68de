"""axe-core in a page: the serious and critical accessibility violations it finds.

axe-core is the npm package pinned in tests/package.json (`cd tests && npm ci`). It is
evaluated through the DevTools protocol rather than added as a <script>, so it also
runs on the live server's pages, whose Content-Security-Policy refuses inline scripts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

AXE = Path(__file__).resolve().parents[1] / "node_modules" / "axe-core" / "axe.min.js"


def serious_violations(page) -> list[dict]:
    if not AXE.is_file():
        pytest.skip("axe-core is not installed: run `cd tests && npm ci`")
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(f"(() => {{ {AXE.read_text()}\n}})()")
    result = page.evaluate("axe.run(document, { resultTypes: ['violations'] })")
    return [
        {"id": v["id"], "impact": v["impact"], "help": v["help"], "targets": [n["target"] for n in v["nodes"]][:5]}
        for v in result["violations"]
        if v["impact"] in ("serious", "critical")
    ]
