"""Dependencies run one way, and nothing in the tree imports itself round in a circle (STYLE.md).

The layers, from the top down: the project root (condor: settings, urls, asgi, wsgi, celery),
then demo, then the two faces (governance, the admin console; inbox, the reviewers' pages),
then approvals → runs → sessions_app → registry → audit → agents → core. A module may import
its own package and the layers below it; two packages of one layer do not import each other.
A model's foreign key follows the same rule. The client (clients/python) and the examples
stand alone: they speak to Condor over HTTP.

Where a lower layer must tell an upper one something, it sends a signal the upper one
receives (runs.signals, sessions_app.signals). Migrations are left out: they name other apps'
models by label, as Django writes them.
"""

import ast
from pathlib import Path

import pytest
from django.apps import apps

ROOT = Path(__file__).resolve().parent.parent
LAYERS = [
    {"condor"},
    {"demo"},
    {"governance", "inbox"},
    {"approvals"},
    {"runs"},
    {"sessions_app"},
    {"registry"},
    {"audit"},
    {"agents"},
    {"core"},
]  # top first
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}
SKIPPED = {"tests", "node_modules", "__pycache__", ".venv", "staticfiles", "migrations", ".git"}


def source_files():
    return sorted(path for path in ROOT.rglob("*.py") if not SKIPPED & set(path.relative_to(ROOT).parts))


def module_layer(dotted: str) -> str | None:
    package = dotted.split(".")[0]
    return package if package in RANK else None


def against_the_order(layer: str, target: str) -> bool:
    """An import from package `layer` of package `target`: up, or across to a sibling of the same layer."""
    return target != layer and RANK[target] <= RANK[layer]


def file_module(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[:3] == ["clients", "python", "src"]:
        parts = parts[3:]
    elif parts[:2] == ["examples", "langgraph"]:
        parts = parts[2:]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def first_party_modules():
    return {file_module(path) for path in source_files()}


def imports_of(path: Path, modules=None):
    """Every module `path` imports, at the top or inside a function: both are dependencies.

    `from package import name` is the module `package.name` where that is a module, else `package`.
    """
    modules = first_party_modules() if modules is None else modules
    package = file_module(path) if path.name == "__init__.py" else file_module(path).rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                yield f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base


def upward_edges():
    found, modules = set(), first_party_modules()
    for path in source_files():
        layer = module_layer(file_module(path))
        if layer is None:
            continue
        for imported in imports_of(path, modules):
            target = module_layer(imported)
            if target is not None and against_the_order(layer, target):
                found.add((str(path.relative_to(ROOT)), target))
    return found


def test_no_module_imports_a_layer_above_its_own():
    found = sorted(upward_edges())
    assert not found, f"imports against the layer order {LAYERS}: {found}"


@pytest.mark.parametrize(
    "layer, target, against",
    [
        ("runs", "approvals", True),  # up
        ("inbox", "governance", True),  # across, between two packages of one layer
        ("approvals", "runs", False),  # down
        ("core", "core", False),  # its own package
    ],
)
def test_the_order_is_read_one_way(layer, target, against):
    assert against_the_order(layer, target) is against


def upward_keys():
    found = set()
    for model in apps.get_models():
        layer = module_layer(model.__module__)
        for field in model._meta.get_fields():
            if field.is_relation and field.concrete and field.related_model is not None:
                target = module_layer(field.related_model.__module__)
                if layer and target and against_the_order(layer, target):
                    found.add((f"{model._meta.label}.{field.name}", target))
    return found


def test_foreign_keys_point_down_the_layers():
    assert upward_keys() == set()


def import_graph():
    """File → the first-party files it imports (a name imported from a package counts as its module)."""
    files = {file_module(path): str(path.relative_to(ROOT)) for path in source_files()}
    graph = {}
    for path in source_files():
        here = str(path.relative_to(ROOT))
        targets = set()
        for imported in imports_of(path, set(files)):
            while imported and imported not in files:
                imported = imported.rpartition(".")[0]
            if imported and files[imported] != here:
                targets.add(files[imported])
        graph[here] = targets
    return graph


def circles(graph):
    """Tarjan's strongly connected components of more than one file: each is an import circle."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_tree_has_no_import_circle():
    assert circles(import_graph()) == []


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"a"}}, [{"a", "b"}]),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [{"a", "b", "c"}]),
        ({"a": {"b"}, "b": set()}, []),
    ],
)
def test_the_circle_finder_finds_circles(graph, expected):
    assert circles(graph) == expected


def test_the_scan_sees_every_package_and_the_imports_inside_functions():
    graph = import_graph()
    assert {path.split("/")[0] for path in graph} >= {
        "approvals",
        "runs",
        "sessions_app",
        "condor",
        "bench",
        "clients",
        "examples",
        "scripts",
    }
    # core/error_pages.py imports db_unavailable at the top; an inner import counts the same.
    assert "core/db_unavailable.py" in graph["core/error_pages.py"]
