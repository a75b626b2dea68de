from django.db import connection
from django.urls import path
from rest_framework.response import Response
from rest_framework.views import APIView

TABLE_SQL = "CREATE TABLE IF NOT EXISTS bench_bare_row (id bigserial PRIMARY KEY, body jsonb NOT NULL)"


class OneInsert(APIView):
    def post(self, request):
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO bench_bare_row (body) VALUES (%s::jsonb) RETURNING id",
                           [__import__("json").dumps(request.data)])
            row_id = cursor.fetchone()[0]
        return Response({"id": row_id, "decision": "allow"})


urlpatterns = [path("insert/", OneInsert.as_view())]
