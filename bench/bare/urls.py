import json
import os
import pickle
from functools import cache
from pathlib import Path

from django.db import connection, transaction
from django.urls import path
from psycopg.types.json import Jsonb
from rest_framework.response import Response
from rest_framework.views import APIView

from bench.floor import fold

TABLE_SQL = "CREATE TABLE IF NOT EXISTS bench_bare_row (id bigserial PRIMARY KEY, body jsonb NOT NULL)"


class OneInsert(APIView):
    def post(self, request):
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO bench_bare_row (body) VALUES (%s::jsonb) RETURNING id",
                           [json.dumps(request.data)])
            row_id = cursor.fetchone()[0]
        return Response({"id": row_id, "decision": "allow"})


def _param(value):
    return Jsonb(value[1]) if isinstance(value, tuple) and value[:1] == ("jsonb",) else value


@cache
def _floor_statements() -> dict:
    # Written by bench/floor.py's capture before the first floor request; read once a process.
    captured = pickle.loads(Path(os.environ["CONDOR_BENCH_FLOOR"]).read_bytes())
    for run in captured["runs"]:
        for name in ("lock", "write"):
            sql, params = run[name]
            run[name] = (sql, [_param(value) for value in params])
    return captured


def _floor_call(request) -> tuple[tuple[str, list], tuple[str, list]]:
    """The captured run's lock and write statements, the write's tool call id the request's own."""
    run = _floor_statements()["runs"][request.data["run"]]
    write_sql, write_params = run["write"]
    write_params = list(write_params)
    write_params[run["tool_call_id_at"]] = request.data["tool_call_id"]
    return run["lock"], (write_sql, write_params)


class GateSqlFloor(APIView):
    """A gate allow's own statements, as Condor sends them, with none of Condor's Python (bench/floor.py)."""

    def post(self, request):
        (lock_sql, lock_params), (write_sql, write_params) = _floor_call(request)
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(lock_sql, lock_params)
            cursor.fetchall()
            cursor.execute(write_sql, write_params)
            event_id = cursor.fetchone()[-1][0]
        # No published mark: Condor's push thread writes one for many calls at a time (runs/push_marks.py).
        return Response({"id": event_id, "decision": "allow"})


class GateSqlFloorFolded(APIView):
    """The same statements folded into one, sent in autocommit: no BEGIN, no COMMIT (bench/floor.py `fold`)."""

    def post(self, request):
        (lock_sql, lock_params), (write_sql, write_params) = _floor_call(request)
        with connection.cursor() as cursor:
            cursor.execute(fold(lock_sql, write_sql), [*lock_params, *write_params])
            event_id = cursor.fetchone()[-1][0]
        return Response({"id": event_id, "decision": "allow"})


urlpatterns = [path("insert/", OneInsert.as_view()), path("floor/", GateSqlFloor.as_view()),
               path("floor-folded/", GateSqlFloorFolded.as_view())]
