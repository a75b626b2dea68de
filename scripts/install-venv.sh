#!/bin/sh
# Build the virtualenv for `make run` / `make test`, fast and visibly.
# uv (an installer from PyPI, many times faster than pip) does the work when it can
# be had; otherwise plain pip, with its progress bars, does the same install.
set -eu
PYTHON=${1:-python3}
VENV=${2:-.venv}
PY="$VENV/bin/python"

if [ ! -x "$PY" ]; then
    echo "==> Creating the virtualenv in $VENV"
    "$PYTHON" -m venv "$VENV"
fi

UV=$(command -v uv || true)
if [ -z "$UV" ]; then
    echo "==> Fetching uv from PyPI (the fast installer; falls back to pip if it cannot be had)"
    if "$PY" -m pip install --disable-pip-version-check --quiet uv; then
        UV="$VENV/bin/uv"
    fi
fi

if [ -n "$UV" ] && "$UV" --version >/dev/null 2>&1 \
    && echo "==> Installing requirements.txt with $("$UV" --version)" \
    && "$UV" pip install --python "$PY" -r requirements.txt; then
    :
else
    # uv missing, or it could not finish (say its index is unreachable): pip does the same install.
    echo "==> Installing requirements.txt with pip"
    "$PY" -m pip install --disable-pip-version-check --upgrade pip
    "$PY" -m pip install --disable-pip-version-check --progress-bar on -r requirements.txt
fi
