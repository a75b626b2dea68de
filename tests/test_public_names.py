"""A name another module uses carries no leading underscore (STYLE.md, CONTRIBUTING.md).

A leading `_` says "this module's own": a function other modules call is public, and its
docstring says the transaction it expects. The scan reads every first-party module, tests
included, for `from pkg.module import _name` and `module._name` where `module` is a
first-party module (a model's documented `_meta` and `_state` are attributes of a class or an
instance, not of a module, and are not looked at).

Product code reaches into no other module's private names. The tests still reach into the
ones in KNOWN_TEST_REACHES (internal state a test sets or reads: a cache's pause, a thread's
start, a key's spelling); the list only shrinks: a new reach fails, and so does an entry no
longer used (take it off).
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIRST_PARTY = {
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
    "bench",
}
SKIPPED = {"node_modules", "__pycache__", ".venv", "staticfiles", "migrations", ".git"}

KNOWN_TEST_REACHES = {
    ("tests/approvals/test_escalation.py", "approvals.escalation._escalate"),
    ("tests/sqlite_flow.py", "approvals.visibility._read_teams"),
    ("tests/test_signed_in_reads.py", "approvals.visibility._read_teams"),
    ("tests/test_api_key_cache.py", "agents.api_key_cache._paused_until"),
    ("tests/test_error_codes_documented.py", "core.errors._DRF_CODES"),
    ("tests/test_serializer_fields_once.py", "core.serializers._plan"),
    ("tests/runs/test_inprocess_sweeps.py", "condor.inprocess._started"),
    ("tests/approvals/test_hot_path_queries.py", "runs.listeners._key"),
    ("tests/live/test_inbox_socket.py", "runs.listeners._key"),
    ("tests/runs/test_listeners.py", "runs.listeners._key"),
    ("tests/runs/test_push_loops.py", "runs.publish._thread_loops"),
    ("tests/runs/test_stream_news.py", "runs.stream._stream"),
    ("tests/runs/test_sweep_batches.py", "runs.sweep_batches._guarded"),
    ("tests/runs/test_sweep_orphan_recheck.py", "runs.sweep_batches._guarded"),
}


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def is_module(dotted: str) -> bool:
    path = ROOT.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def reaches(path: Path) -> set[str]:
    """`module._name` for every other first-party module's private name `path` uses."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    own = module_of(path)
    modules, found = {}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] not in FIRST_PARTY:
                continue
            for alias in node.names:
                if is_private(alias.name) and node.module != own:
                    found.add(f"{node.module}.{alias.name}")
                dotted = f"{node.module}.{alias.name}"
                if is_module(dotted):
                    modules[alias.asname or alias.name] = dotted
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in FIRST_PARTY:
                    modules[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and is_private(node.attr):
            chain, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                chain.append(base.attr)
                base = base.value
            if not isinstance(base, ast.Name) or base.id not in modules:
                continue
            owner = ".".join([modules[base.id], *reversed(chain[1:])])
            if is_module(owner) and owner != own:
                found.add(f"{owner}.{node.attr}")
    return found


def first_party_files():
    for package in sorted(FIRST_PARTY):
        for path in sorted((ROOT / package).rglob("*.py")):
            if not SKIPPED & set(path.relative_to(ROOT).parts):
                yield path


def all_reaches() -> set[tuple[str, str]]:
    return {(str(path.relative_to(ROOT)), name) for path in first_party_files() for name in reaches(path)}


def test_product_code_uses_no_other_modules_private_names():
    found = sorted((path, name) for path, name in all_reaches() if not path.startswith(("tests/", "bench/")))
    assert not found, "give these a public name, its docstring saying the transaction it expects:\n" + "\n".join(
        f"{path}: {name}" for path, name in found
    )


def test_tests_reach_only_into_the_private_names_listed():
    found = {reach for reach in all_reaches() if reach[0].startswith(("tests/", "bench/"))}
    assert not found - KNOWN_TEST_REACHES, f"new reaches into private names: {sorted(found - KNOWN_TEST_REACHES)}"
    assert not KNOWN_TEST_REACHES - found, f"no longer used: take them off: {sorted(KNOWN_TEST_REACHES - found)}"


def test_the_scan_sees_a_reach_in_both_spellings(tmp_path, monkeypatch):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "__init__.py").write_text("")
    (tmp_path / "runs" / "spine.py").write_text("def _close():\n    pass\n")
    user = tmp_path / "runs" / "user.py"
    user.write_text(
        "from runs import spine\nfrom runs.spine import _close\n\n\ndef f(model):\n"
        "    spine._close()\n    return model._meta\n"
    )
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    assert reaches(user) == {"runs.spine._close"}
