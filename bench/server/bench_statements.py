"""Counts the SQL statements a request sends and answers them in a header (bench/compare.py).

Through Django's documented `connection.execute_wrapper`, on the request's own thread and
connection: what another thread sends for it later (a push, its mark) is not counted. The
header `X-Bench-Statements` carries two numbers, "IN OUT": IN as tests/approvals/
test_hot_path_queries.py pins a path, BEGIN to COMMIT, both included (neither goes through
a cursor: each transaction adds two to the statements seen inside it); OUT the statements
sent outside any transaction (a reviewer's session and user reads).
"""

from django.db import connection, transaction

HEADER = "X-Bench-Statements"


class CountStatements:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        seen = {"inside": 0, "outside": 0, "transactions": 0, "was_inside": False}

        def count(execute, sql, params, many, context):
            inside = not transaction.get_autocommit(using=context["connection"].alias)
            if inside and not seen["was_inside"]:
                seen["transactions"] += 1
            seen["inside" if inside else "outside"] += 1
            seen["was_inside"] = inside
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            response = self.get_response(request)
        response[HEADER] = f"{seen['inside'] + 2 * seen['transactions']} {seen['outside']}"
        return response
