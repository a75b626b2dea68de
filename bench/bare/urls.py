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


class GateSqlFloor(APIView):
    """A gate allow's own statements, as Condor sends them, with none of Condor's Python (bench/floor.py)."""

    def post(self, request):
        captured = _floor_statements()
        run = captured["runs"][request.data["run"]]
        (lock_sql, lock_params), (write_sql, write_params) = run["lock"], run["write"]
        write_params = list(write_params)
        write_params[run["tool_call_id_at"]] = request.data["tool_call_id"]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(lock_sql, lock_params)
            cursor.fetchall()
            cursor.execute(write_sql, write_params)
            event_id = cursor.fetchone()[-1][0]
        # No published mark: Condor's push thread writes one for many calls at a time (runs/push_marks.py).
        return Response({"id": event_id, "decision": "allow"})


urlpatterns = [path("insert/", OneInsert.as_view()), path("floor/", GateSqlFloor.as_view())]
