"""A read compiled once (condor.sql.rows_of) answers for the value it is given each time."""

from django.db.models import TextField
from django.db.models.functions import Cast

from condor.sql import rows_of
from sessions_app.models import Message
from tests.helpers.runs import append, make_session


def texts_of(session_id):
    return Message.objects.filter(session=session_id).order_by("seq").values_list(
        "message_id", Cast("parts", TextField()))


def test_each_call_reads_its_own_session_as_the_orm_would(api):
    sessions = [make_session(api)["id"] for _ in range(3)]
    for n, session_id in enumerate(sessions):
        for m in range(n):
            append(api, session_id, "user", [{"type": "text", "text": f"{n}.{m} — µg"}], id=f"m{n}.{m}")

    answers = [rows_of(texts_of, Message, "session", session_id) for session_id in sessions]

    assert answers == [list(texts_of(session_id)) for session_id in sessions]
    assert [len(rows) for rows in answers] == [0, 1, 2]
