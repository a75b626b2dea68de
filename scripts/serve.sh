#!/bin/sh
# `make run`'s last step: the server, and beside it the demo agent (DEMO_AGENT=0 leaves it off).
# Ctrl-C stops both. Background jobs of a non-interactive shell ignore SIGINT, so
# the trap passes the stop on to each of them by process id.
set -u
PY=${PY:-.venv/bin/python}
PORT=${PORT:-8000}

CONDOR_INPROCESS_SWEEPS=${CONDOR_INPROCESS_SWEEPS:-1} "$PY" manage.py runserver --noreload "127.0.0.1:$PORT" &
server=$!
agent=""
if [ "${DEMO_AGENT:-1}" != "0" ]; then
    echo "Demo agent: on (DEMO_AGENT=0 make run leaves it off); its sessions appear in the inbox as it plays them."
    "$PY" manage.py demo_agent --base-url "http://127.0.0.1:$PORT" &
    agent=$!
fi

stop() {
    trap - INT TERM
    kill $agent $server 2>/dev/null
    wait
}
trap 'stop; exit 130' INT TERM
wait "$server"
status=$?
stop
exit "$status"
