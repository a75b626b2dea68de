"""Finds where first-party code leans on what a library (or CPython) does not document.

Every .py file of a repository outside tests/, bench/ and installed environments is
first-party (so an app added later is covered the day it appears), and read as an AST.
An offence, reported with its file and line, is:

- an import of an underscore-prefixed module or name from a package that is not
  first-party (`from psycopg import _queries`), or of an undocumented name on
  DENIED_NAMES (`from json.encoder import c_make_encoder`);
- an attribute `x._name`, or `getattr(x, "_name")`, where no first-party code defines
  `_name` (a def, a class, a name, an argument or an attribute it assigns): then the name
  is a library's. The underscore names libraries document are allowed by name;
- a first-party class overriding an underscore method or class attribute that a library
  base class defines (Django's `SessionStore._get_session_from_db`);
- an assignment to an attribute of a module, class or function of a third-party package
  (a monkeypatch). Setting a documented attribute on a library's object (`admin.site.login_form`)
  is configuration, not a patch.

What the heuristic cannot see: code that sets a library's private attribute on one of the
library's objects makes the name look first-party, and an instance attribute a library
base class sets in its `__init__` is not checked for overrides. Review covers those.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from dataclasses import dataclass
from pathlib import Path

# Not product code: tests may probe a library's internals; benchmarks are run by hand.
NOT_SCANNED = {"tests", "bench", "node_modules", "__pycache__"}

# Underscore names their library documents as API.
DOCUMENTED_UNDERSCORE = {
    "_meta": "Django's Model._meta API (ref/models/meta)",
    "_state": "Django's Model._state, its `adding` and `db` only (ref/models/instances)",
    "_default_manager": "Django's Model._default_manager (topics/db/managers)",
    "_base_manager": "Django's Model._base_manager (topics/db/managers)",
    "_map_serializer": "drf-spectacular's AutoSchema._map_serializer, called so in its extension docs",
}
DOCUMENTED_STATE = {"adding", "db"}

# Undocumented though without an underscore: CPython's json internals behind JSONEncoder and
# JSONDecoder, Django's SQL compiler (its queries are written with the ORM or as plain SQL), and
# the column expressions and backend converters it reads rows with (core/rows.py's `reader`
# converts through the fields' documented `to_python` and `from_db_value`).
DENIED_NAMES = {
    "json.encoder": {
        "c_make_encoder",
        "encode_basestring",
        "encode_basestring_ascii",
        "py_encode_basestring",
        "py_encode_basestring_ascii",
        "c_encode_basestring",
        "c_encode_basestring_ascii",
    },
    "json.decoder": {"scanstring", "c_scanstring", "py_scanstring"},
    "json.scanner": {"make_scanner", "c_make_scanner", "py_make_scanner"},
    "django.db.backends.utils": {"CursorWrapper", "CursorDebugWrapper"},
}
DENIED_MODULES = {"django.db.models.sql"}  # and everything under it
DENIED_ATTRIBUTES = set().union(*DENIED_NAMES.values()) | {
    "get_compiler",
    "klass_info",
    "related_klass_infos",
    "returning_fields",
    "get_col",
    "get_db_converters",
}


@dataclass(frozen=True)
class Offence:
    path: str
    line: int
    what: str

    def __str__(self):
        return f"{self.path}:{self.line}: {self.what}"


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def first_party_files(root: Path) -> list[Path]:
    return [
        path
        for path in sorted(root.rglob("*.py"))
        if not any(part in NOT_SCANNED or part.startswith(".") for part in path.relative_to(root).parts)
    ]


def module_name(path: Path, root: Path) -> str:
    """The dotted name `path` is imported by: from its outermost package (a directory with __init__.py,
    or an app with apps.py) down; a loose script is its own top-level module."""
    parts = [] if path.stem == "__init__" else [path.stem]
    directory = path.parent
    while directory != root and ((directory / "__init__.py").exists() or (directory / "apps.py").exists()):
        parts.insert(0, directory.name)
        directory = directory.parent
    return ".".join(parts)


@dataclass
class Module:
    path: str  # relative to the root, for the report
    name: str
    tree: ast.Module
    is_package: bool

    def origins(self) -> dict[str, str]:
        """Local name → the dotted path it was imported from (relative imports made absolute)."""
        found = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    top = alias.name.split(".")[0]
                    found[alias.asname or top] = alias.name if alias.asname else top
            elif isinstance(node, ast.ImportFrom):
                base = self.absolute(node)
                for alias in node.names:
                    found[alias.asname or alias.name] = f"{base}.{alias.name}"
        return found

    def absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = self.name.split(".") if self.is_package else self.name.split(".")[:-1]
        package = package[: len(package) - node.level + 1]
        return ".".join([*package, *([node.module] if node.module else [])])


def load(root: Path) -> list[Module]:
    return [
        Module(
            path.relative_to(root).as_posix(),
            module_name(path, root),
            ast.parse(path.read_text(), str(path)),
            path.stem == "__init__",
        )
        for path in first_party_files(root)
    ]


def defined_underscore_names(modules: list[Module]) -> set[str]:
    """Every underscore name first-party code defines or assigns."""
    names = set()
    for module in modules:
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias) and node.asname:
                names.add(node.asname)
            elif named_attribute(node, "setattr"):
                names.add(node.args[1].value)
    return {name for name in names if is_private(name)}


def named_attribute(node, function: str) -> bool:
    """`function(obj, "name", ...)` with a constant name."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == function
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    )


def denied_module(name: str) -> bool:
    return any(name == denied or name.startswith(denied + ".") for denied in DENIED_MODULES)


def resolve(dotted: str):
    """The object at `dotted` (a module, then attributes), or None if it cannot be found."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            found = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            found = getattr(found, part, None)
        return found
    return None


def dotted(expression, origins: dict[str, str]) -> str | None:
    """`a.b.c` as the dotted path it names, through the module's imports; None for anything else."""
    attributes = []
    while isinstance(expression, ast.Attribute):
        attributes.insert(0, expression.attr)
        expression = expression.value
    if isinstance(expression, ast.Name) and expression.id in origins:
        return ".".join([origins[expression.id], *attributes])
    return None


class Scanner(ast.NodeVisitor):
    def __init__(self, module: Module, first_party: set[str], defined: set[str], classes: dict[str, tuple]):
        self.module, self.first_party, self.defined, self.classes = module, first_party, defined, classes
        self.origins = module.origins()
        self.offences: list[Offence] = []

    def offend(self, node, what: str):
        self.offences.append(Offence(self.module.path, node.lineno, what))

    def third_party(self, path: str) -> bool:
        return path.split(".")[0] not in self.first_party

    def visit_Import(self, node):
        for alias in node.names:
            if self.third_party(alias.name) and any(is_private(part) for part in alias.name.split(".")):
                self.offend(node, f"imports the private module {alias.name}")
            elif denied_module(alias.name):
                self.offend(node, f"imports the undocumented module {alias.name}")

    def visit_ImportFrom(self, node):
        module = self.module.absolute(node)
        if node.level or not self.third_party(module):
            return
        if any(is_private(part) for part in module.split(".")):
            self.offend(node, f"imports from the private module {module}")
        elif denied_module(module):
            self.offend(node, f"imports from the undocumented module {module}")
        for alias in node.names:
            if is_private(alias.name):
                self.offend(node, f"imports the private name {alias.name} from {module}")
            elif alias.name in DENIED_NAMES.get(module, ()):
                self.offend(node, f"imports the undocumented {module}.{alias.name}")

    def visit_Attribute(self, node):
        self.check_attribute(node, node.attr, node.value)
        self.generic_visit(node)

    def visit_Call(self, node):
        for function in ("getattr", "hasattr", "setattr", "delattr"):
            if named_attribute(node, function):
                self.check_attribute(node, node.args[1].value, node.args[0])
        if named_attribute(node, "setattr") or named_attribute(node, "delattr"):
            self.check_patch(node, node.args[0])
        self.generic_visit(node)

    def check_attribute(self, node, name: str, owner):
        if name in DENIED_ATTRIBUTES:
            self.offend(node, f"uses the undocumented .{name}")
        elif is_private(name) and name not in DOCUMENTED_UNDERSCORE and name not in self.defined:
            self.offend(node, f"uses the private attribute .{name} of a library")
        elif isinstance(owner, ast.Attribute) and owner.attr == "_state" and name not in DOCUMENTED_STATE:
            self.offend(node, f"uses ._state.{name}, which Django does not document")

    def visit_Assign(self, node):
        for target in node.targets:
            self.check_targets(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        self.check_targets(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node):
        self.check_targets(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node):
        for target in node.targets:
            self.check_targets(target)
        self.generic_visit(node)

    def check_targets(self, target):
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.check_targets(element)
        elif isinstance(target, ast.Attribute):
            self.check_patch(target, target.value)

    def check_patch(self, node, owner):
        """An attribute set on a third-party module, class or function (or on what cannot be found)."""
        path = dotted(owner, self.origins)
        if path is None or not self.third_party(path):
            return
        found = resolve(path)
        if found is None or inspect.ismodule(found) or inspect.isclass(found) or inspect.isroutine(found):
            self.offend(node, f"patches {path}, a library's")

    def visit_ClassDef(self, node):
        for name, item in own_private_names(node):
            for base in self.library_bases(node):
                if any(
                    name in vars(klass)
                    for klass in inspect.getmro(base)
                    if self.third_party(klass.__module__) and klass.__module__ != "builtins"
                ):
                    self.offend(item, f"overrides {name} of {base.__module__}.{base.__qualname__}, a library's")
                    break
        self.generic_visit(node)

    def library_bases(self, node: ast.ClassDef, seen=()):
        """The third-party classes `node` derives from, through first-party classes of the scanned code."""
        for base in node.bases:
            path = (
                dotted(base, self.origins)
                if not isinstance(base, ast.Name) or base.id in self.origins
                else f"{self.module.name}.{base.id}"
            )
            if path is None or path in seen:
                continue
            if not self.third_party(path):
                if path in self.classes:
                    definition, scanner = self.classes[path]
                    yield from scanner.library_bases(definition, (*seen, path))
            elif inspect.isclass(found := resolve(path)):
                yield found


def own_private_names(node: ast.ClassDef):
    """(name, node) of the underscore methods and class attributes the class body defines."""
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_private(item.name):
            yield item.name, item
        elif isinstance(item, (ast.Assign, ast.AnnAssign)):
            for target in item.targets if isinstance(item, ast.Assign) else [item.target]:
                if isinstance(target, ast.Name) and is_private(target.id):
                    yield target.id, item


def offences(root: Path) -> list[Offence]:
    modules = load(root)
    first_party = {module.name.split(".")[0] for module in modules}
    defined = defined_underscore_names(modules)
    classes: dict[str, tuple] = {}
    scanners = [Scanner(module, first_party, defined, classes) for module in modules]
    for scanner in scanners:
        for node in scanner.module.tree.body:
            if isinstance(node, ast.ClassDef):
                classes[f"{scanner.module.name}.{node.name}"] = (node, scanner)
    found = []
    for scanner in scanners:
        scanner.visit(scanner.module.tree)
        found.extend(scanner.offences)
    return found
