"""Quick rejection reasons: governance sets them in the console, every change is audited, and the inbox
offers the active ones, in order, in the reject form (tests/live/test_inbox_ui_quick_reasons.py clicks them)."""

import json

from approvals.models import QuickReason
from audit.models import AuditEvent
from tests.helpers.personas import logged_in

ADD = "/admin/approvals/quickreason/add/"


def post(admin, url, data):
    return admin.post(url, {**data, "csrfmiddlewaretoken": admin.cookies["csrftoken"].value})


def test_governance_adds_a_reason_and_it_is_audited(gina):
    admin = logged_in(gina)
    response = post(admin, ADD, {"text": "  Duplicate of an existing order ", "position": 1, "active": "on"})
    assert response.status_code == 302, response.content.decode()[:2000]
    reason = QuickReason.objects.get()
    assert reason.text == "Duplicate of an existing order"
    row = AuditEvent.objects.get(kind="quick_reason")
    assert (row.actor, row.decision, row.data["quick_reason_id"]) == ("user:gina", "created", reason.pk)
    assert (row.data["before"], row.data["after"]) == (
        None,
        {"text": "Duplicate of an existing order", "position": 1, "active": True},
    )


def test_editing_a_reason_records_before_and_after(gina):
    reason = QuickReason.objects.create(text="Wrong patient", position=2)
    admin = logged_in(gina)
    response = post(
        admin,
        f"/admin/approvals/quickreason/{reason.pk}/change/",
        {"text": "Wrong patient on the order", "position": 2},
    )  # and no longer offered
    assert response.status_code == 302
    row = AuditEvent.objects.get(kind="quick_reason")
    assert row.decision == "updated"
    assert row.data["before"] == {"text": "Wrong patient", "position": 2, "active": True}
    assert row.data["after"] == {"text": "Wrong patient on the order", "position": 2, "active": False}


def test_deleting_reasons_from_the_list_audits_each(gina):
    doomed = [QuickReason.objects.create(text=t) for t in ("Not indicated", "Already given")]
    admin = logged_in(gina)
    response = post(
        admin,
        "/admin/approvals/quickreason/",
        {"action": "delete_selected", "post": "yes", "_selected_action": [str(r.pk) for r in doomed]},
    )
    assert response.status_code == 302
    assert not QuickReason.objects.exists()
    assert sorted((r.decision, r.data["before"]["text"]) for r in AuditEvent.objects.filter(kind="quick_reason")) == [
        ("deleted", "Already given"),
        ("deleted", "Not indicated"),
    ]


def test_saving_without_a_change_leaves_no_row(gina):
    reason = QuickReason.objects.create(text="Not indicated", position=0)
    admin = logged_in(gina)
    post(
        admin,
        f"/admin/approvals/quickreason/{reason.pk}/change/",
        {"text": "Not indicated", "position": 0, "active": "on"},
    )
    assert not AuditEvent.objects.filter(kind="quick_reason").exists()


def test_a_blank_or_multiline_reason_is_refused(gina):
    admin = logged_in(gina)
    for text in ("   ", "Two\nlines"):
        response = post(admin, ADD, {"text": text, "position": 0, "active": "on"})
        assert response.status_code == 200  # the form again, with the error
    assert not QuickReason.objects.exists()
    assert not AuditEvent.objects.filter(kind="quick_reason").exists()


def test_compliance_reads_reasons_but_cannot_change_them(carl):
    reason = QuickReason.objects.create(text="Not indicated")
    admin = logged_in(carl)
    assert admin.get("/admin/approvals/quickreason/").status_code == 200
    assert admin.get(ADD).status_code == 403
    refused = post(admin, f"/admin/approvals/quickreason/{reason.pk}/change/", {"text": "Mine", "position": 0})
    assert refused.status_code == 403
    assert QuickReason.objects.get().text == "Not indicated"
    assert not AuditEvent.objects.filter(kind="quick_reason").exists()


def test_a_reviewer_cannot_edit_them(rita):
    assert logged_in(rita).get("/admin/approvals/quickreason/").status_code in (302, 403)


def test_the_inbox_offers_the_active_reasons_in_order(rita):
    QuickReason.objects.create(text="Wrong patient", position=2)
    QuickReason.objects.create(text="Duplicate order", position=1)
    QuickReason.objects.create(text="Retired reason", position=0, active=False)
    page = logged_in(rita).get("/inbox/").content.decode()
    block = page.split('<script id="quick-reasons" type="application/json">', 1)[1].split("</script>", 1)[0]
    assert json.loads(block) == ["Duplicate order", "Wrong patient"]


def test_a_reason_cannot_break_out_of_the_page(rita):
    QuickReason.objects.create(text="</script><script>alert(1)</script>")
    page = logged_in(rita).get("/inbox/").content.decode()
    assert "<script>alert(1)" not in page


def test_the_demo_seeds_quick_reasons_once_and_audits_them(db):
    from demo.management.commands.seed_demo import QUICK_REASONS, Command

    Command()._quick_reasons()
    Command()._quick_reasons()
    assert list(QuickReason.objects.values_list("text", flat=True)) == list(QUICK_REASONS)
    rows = AuditEvent.objects.filter(kind="quick_reason")
    assert rows.count() == len(QUICK_REASONS)
    assert {r.actor for r in rows} == {"command:seed_demo"}
