"""A name another module uses carries no leading underscore (STYLE.md, CONTRIBUTING.md).

A leading `_` says "this module's own": a function other modules call is public, and its
docstring says the transaction it expects. The scan reads every first-party module, tests
included, for `from pkg.module import _name` and `module._name` where `module` is a
first-party module (a model's documented `_meta` and `_state` are attributes of a class or an
instance, not of a module, and are not looked at).

No module reaches into another's private names, the tests included: what a test sets or
reads (a cache's pause, a thread's start, a key's spelling) has a public name.
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


def test_no_module_uses_another_modules_private_names():
    found = sorted(all_reaches())
    assert not found, "give these a public name, its docstring saying the transaction it expects:\n" + "\n".join(
        f"{path}: {name}" for path, name in found
    )


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
