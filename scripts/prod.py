"""`make prod`: the production layout on this machine, behind one port.

Checks DATABASE_URL (PostgreSQL) and REDIS_URL, migrates, writes the nginx config
(deploy/nginx.conf) into the run directory, then hands over to honcho, which starts
every process of the Procfile and stops all of them on Ctrl-C (or when one dies).

Usage: scripts/prod.py [--port 8000] [--run-dir var/prod]
Stdlib only until it runs manage.py, so a missing variable is reported before anything starts.
"""

from __future__ import annotations

import argparse
import getpass
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parents[1]
TEMPLATE = REPO / "deploy" / "nginx.conf"
BIN = Path(sys.executable).parent  # the venv's bin: gunicorn, daphne, celery, honcho
REQUIRED = {
    "DATABASE_URL": ({"postgres", "postgresql", "pgsql"}, "PostgreSQL, e.g. postgres://postgres@127.0.0.1:5432/condor"),
    "REDIS_URL": ({"redis", "rediss", "unix"}, "Redis, e.g. redis://127.0.0.1:6379/0"),
}


class ConfigError(Exception):
    pass


def check_environment(environ) -> None:
    """Several processes share one database and one channel layer: both must be servers."""
    problems = []
    for name, (schemes, example) in REQUIRED.items():
        value = environ.get(name, "").strip()
        if not value:
            problems.append(f"{name} is not set: make prod needs {example}.")
        elif urlparse(value).scheme not in schemes:
            problems.append(f"{name} must point at {example}; got {value!r}.")
    if problems:
        raise ConfigError("\n".join(problems))


def render_nginx_config(*, port: int, run_dir: Path) -> str:
    # As root, nginx would hand its workers to `nobody`, who cannot open the unix sockets
    # in the run directory: the workers run as whoever ran make prod, root or not.
    user = f"user {getpass.getuser()};" if os.geteuid() == 0 else "# (not root: workers run as this user)"
    return TEMPLATE.read_text().replace("@USER@", user).replace("@RUN_DIR@", str(run_dir)).replace("@PORT@", str(port))


def prepare_run_dir(run_dir: Path, *, port: int) -> None:
    run_dir.mkdir(parents=True, exist_ok=True)
    for stale in run_dir.glob("*.sock"):  # left by a run that was killed outright
        stale.unlink()
    (run_dir / "nginx.conf").write_text(render_nginx_config(port=port, run_dir=run_dir))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", 8000)))
    parser.add_argument("--run-dir", type=Path, default=Path(os.environ.get("CONDOR_RUN_DIR", REPO / "var" / "prod")))
    args = parser.parse_args(argv)
    try:
        check_environment(os.environ)
    except ConfigError as error:
        print(f"make prod: {error}", file=sys.stderr)
        return 2
    run_dir = args.run_dir.resolve()
    prepare_run_dir(run_dir, port=args.port)
    env = {**os.environ, "CONDOR_RUN_DIR": str(run_dir), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    manage = [sys.executable, str(REPO / "manage.py")]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=REPO, env=env, check=True)
    subprocess.run([*manage, "collectstatic", "--noinput", "-v0"], cwd=REPO, env=env, check=True)
    print(f"make prod: Condor on http://127.0.0.1:{args.port}/ (nginx config: {run_dir / 'nginx.conf'})", flush=True)
    # exec: honcho takes this process's place, so Ctrl-C (or a SIGTERM to make) reaches it.
    honcho = str(BIN / "honcho")
    os.execve(honcho, [honcho, "start", "-f", str(REPO / "Procfile"), "-d", str(REPO)], env)


if __name__ == "__main__":
    sys.exit(main())
