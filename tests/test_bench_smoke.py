"""Every benchmark in bench/ still runs: each entry point's --help, and its --smoke mode end to end.

A benchmark is run by hand, rarely; without this it would break quietly with the code it
measures. Each runs as a person would run it, in a process of its own, on a scratch
database of its own: a copy of one migrated here once (a migration takes longer than most
smoke runs). bench/compare.py serves this tree twice, OLD and NEW.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"

# Each entry point and what its smoke run needs beside PostgreSQL: Redis.
ENTRY_POINTS = {
    "compare": True,
    "card_latency": True,
    "sweep": True,
    "inbox_page": False,
    "sessions": False,
    "policy": False,
    "strict_json": False,
    "admin_search": False,
}
NEEDS_DATABASE = {"compare", "card_latency", "sweep", "inbox_page", "sessions", "admin_search"}

pytestmark = pytest.mark.bench


def entry_points() -> set[str]:
    return {path.stem for path in BENCH.glob("*.py") if 'if __name__ == "__main__":' in path.read_text()}


def bench_imports(path: Path) -> set[str]:
    """The bench modules `path` imports (bench.X, or X from bench)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[1] for alias in node.names if alias.name.startswith("bench.")}
        elif isinstance(node, ast.ImportFrom) and node.module == "bench":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bench."):
            found.add(node.module.split(".")[1])
    return found


def test_every_entry_point_has_a_smoke_run():
    assert entry_points() == set(ENTRY_POINTS)


def test_no_bench_module_imports_itself_back():
    graph = {path.stem: bench_imports(path) for path in BENCH.glob("*.py")}
    done, stack = set(), []

    def visit(module):
        assert module not in stack, f"an import circle: {' -> '.join([*stack, module])}"
        if module in done:
            return
        stack.append(module)
        for imported in graph.get(module, ()):
            visit(imported)
        stack.pop()
        done.add(module)

    for module in graph:
        visit(module)


def run(name: str, *args: str, env: dict | None = None) -> str:
    done = subprocess.run(
        [sys.executable, str(BENCH / f"{name}.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=280,
    )
    assert done.returncode == 0, f"bench/{name}.py {' '.join(args)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_help(name):
    assert "--smoke" in run(name, "--help")


def maintenance():
    return psycopg.connect(server_url("postgres"), autocommit=True)


def server_url(database: str) -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        pytest.skip("the benchmarks measure PostgreSQL: DATABASE_URL=postgres://…")
    return url.rsplit("/", 1)[0] + "/" + database


@pytest.fixture(scope="module")
def migrated():
    """The name of a database migrated by this tree, which each smoke run's database copies.

    Every database of the module is dropped at its end: a drop waits for a checkpoint, and one
    after another they wait for one each time.
    """
    name = f"bench_smoke_{os.getpid()}"
    with maintenance() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v", "0"],
            cwd=ROOT,
            check=True,
            timeout=280,
            env={**os.environ, "DATABASE_URL": server_url(name)},
        )
        yield name
    finally:
        with maintenance() as conn:
            copies = [
                row[0] for row in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", [f"{name}_%"])
            ]
            for database in [*copies, name]:
                conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


@pytest.fixture
def scratch(request, migrated):
    """DATABASE_URL of a copy of the migrated database (dropped with it)."""
    name = f"{migrated}_{request.node.callspec.id}"
    with maintenance() as conn:
        conn.execute(f'CREATE DATABASE "{name}" TEMPLATE "{migrated}"')
    return server_url(name)


def smoke_env(name: str, database_url: str) -> dict:
    env = {"DATABASE_URL": database_url}
    if ENTRY_POINTS[name]:
        if not settings.REDIS_URL:
            pytest.skip(f"bench/{name}.py needs Redis: REDIS_URL=redis://…")
        # Under this test run's prefix: tests/conftest.py removes its keys at the end.
        env |= {"REDIS_URL": settings.REDIS_URL, "CONDOR_CHANNEL_PREFIX": f"{settings.REDIS_PREFIX}-bench"}
    return env


@pytest.mark.parametrize("name", sorted(NEEDS_DATABASE - {"compare"}))
def test_smoke_on_a_database(name, scratch):
    assert run(name, "--smoke", env=smoke_env(name, scratch)).strip()


@pytest.mark.parametrize("name", ["policy", "strict_json"])
def test_smoke_in_process(name):
    assert run(name, "--smoke").strip()


def test_compare_serves_this_tree_as_old_and_new(migrated):
    out = run(
        "compare",
        str(ROOT),
        str(ROOT),
        "--smoke",
        "--template-db",
        migrated,
        env=smoke_env("compare", server_url("postgres")),
    )
    table = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert {"gate allow", "suspend", "decision", "resume", "HITL cycle (median)"} <= set(table), out
    # Each server counted the statements of its requests: the same tree, the same usual count (how
    # often a first request of a process reads what later ones find cached may differ).
    for path in ("gate allow", "suspend", "decision", "resume"):
        old, new = (cell.split()[0] for cell in table[path].split("|")[-3:-1])
        assert old == new and old[0].isdigit(), table[path]
