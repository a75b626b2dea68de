"""The admin's session page: history, pinned cards, linked entities and runs, read-only (SPEC section 7, 8)."""

from sessions_app import pinned_cards
from sessions_app.models import Session
from tests.governance.test_admin import admin_client
from tests.helpers.approval_loop import CHART_READ, gate, report
from tests.helpers.runs import append, open_executing_run


def test_compliance_sees_the_conversation_of_a_session(api, catalog, carl):
    run_id = open_executing_run(api, age_band="adult")
    session = Session.objects.get(runs__id=run_id)
    append(api, session.pk, "user", [{"type": "text", "text": "<script>alert(1)</script>"}], id="u1")
    gate(api, run_id, tool="get_patient_summary", op="", args=CHART_READ, tool_call_id="read")
    report(api, run_id, "read", {"ok": True}, entities=[{"kind": "patient", "id": "p-1042", "label": "Okafor, Ada"}])
    pinned_cards.pin(session.pk, spec={"kind": "lab_result", "title": "Potassium 5.9", "data": {}})

    page = admin_client(carl).get(f"/admin/sessions_app/session/{session.pk}/change/")

    assert page.status_code == 200
    html = page.content.decode()
    for text in (
        "u1",
        "tool-get_patient_summary",
        "output-available",
        "Potassium 5.9",
        "p-1042",
        "Okafor, Ada",
        str(run_id),
    ):
        assert text in html
    assert "<script>alert(1)</script>" not in html  # escaped
    assert 'name="_save"' not in html  # read-only
