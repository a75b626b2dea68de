"""Registry four eyes (issue 10): a change that lowers risk waits for a second governance admin.

`gina` proposes, `gwen` (another governance admin) confirms; `carl` (compliance) may look, not decide.
"""

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from audit.models import AuditEvent
from core.errors import (
    NotGovernanceAdmin,
    ToolChangeAlreadyPending,
    ToolChangeNeedsSecondAdmin,
    ToolChangeStale,
)
from registry import changes as registry_changes
from registry.descriptors import register, snapshot
from registry.models import ToolChange, ToolDescriptor
from tests.governance.test_admin import TOOL_FORM, admin_client, change_url, post
from tests.helpers.personas import person

TOOL = "prescribe_medication"


@pytest.fixture
def gwen(db):
    return person("gwen", "governance")


def tool_row(name=TOOL) -> ToolDescriptor:
    return ToolDescriptor.objects.get(name=name)


def registry_audit(decision=None):
    rows = AuditEvent.objects.filter(kind=AuditEvent.Kind.REGISTRY_CHANGE).order_by("id")
    return rows.filter(decision=decision) if decision else rows


def lowering(name, before, **after):
    return registry_changes.lowering_reasons(name, before, {**(before or {}), **after})


def row(**fields):
    return {
        "description": "",
        "policy_class": None,
        "hitl_tier": None,
        "trust": "trusted",
        "allowed_hosts": [],
        "metadata": {},
        **fields,
    }


# --- what lowers risk ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "before", "after", "reason"),
    [
        ("amend_allergy", row(policy_class="mutate", hitl_tier="high"), {"hitl_tier": "low"}, "tier high → low"),
        ("fetch_feed", row(trust="untrusted"), {"trust": "trusted"}, "trust untrusted → trusted"),
        (
            "fax_letter",
            row(policy_class="comms", allowed_hosts=["a.example"]),
            {"allowed_hosts": ["a.example", "b.example"]},
            "allowed hosts added: b.example",
        ),
        (
            "amend_allergy",
            row(policy_class="mutate", hitl_tier="high"),
            {"policy_class": "read"},
            "policy class mutate → read",
        ),
        (
            "run_job",
            row(policy_class="exec"),
            {"policy_class": "comms", "allowed_hosts": ["x.example"]},
            "policy class exec → comms",
        ),
        ("legacy_write", row(metadata={"mutating": True}), {"metadata": {}}, "policy class mutate → read"),
        # Clearing a row's field falls back to the static catalog: judged on what the gate applies.
        (
            "send_email",
            row(policy_class="comms", allowed_hosts=["a.example"]),
            {"allowed_hosts": []},
            "smtp.clinic.example",
        ),
        # A new tool the gate would then allow: before its row every call failed closed.
        ("lookup_beds", None, {"policy_class": "read"}, "truth-table cell"),
    ],
)
def test_these_changes_lower_risk(db, name, before, after, reason):
    assert any(reason in text for text in lowering(name, before, **(after if before else row(**after))))


@pytest.mark.parametrize(
    ("name", "before", "after"),
    [
        ("amend_allergy", row(policy_class="mutate", hitl_tier="low"), {"hitl_tier": "high"}),
        (
            "fax_letter",
            row(policy_class="comms", allowed_hosts=["a.example", "b.example"]),
            {"allowed_hosts": ["a.example"]},
        ),
        ("amend_allergy", row(policy_class="read"), {"policy_class": "mutate", "hitl_tier": "low"}),
        ("amend_allergy", row(policy_class="mutate", hitl_tier="high"), {"description": "Amend an allergy"}),
        ("fetch_feed", row(trust="trusted"), {"trust": "untrusted"}),
        # A row cannot clear the catalog's "untrusted": nothing the gate applies changes.
        ("web_search", row(trust="untrusted"), {"trust": "trusted"}),
        ("amend_allergy", None, row(policy_class="mutate", hitl_tier="high")),
    ],
)
def test_these_changes_do_not_lower_risk(db, name, before, after):
    assert lowering(name, before, **after) == []


# --- the service -----------------------------------------------------------------------------


def test_a_lowering_change_is_proposed_not_applied_and_the_proposal_is_audited(gina, catalog):
    before = snapshot(tool_row())
    submitted = registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina)
    assert submitted.descriptor is None
    change = submitted.change
    assert (change.status, change.proposed_by, change.before, change.after["hitl_tier"]) == (
        "pending",
        gina,
        before,
        "low",
    )
    assert tool_row().hitl_tier == "high"
    proposed = registry_audit("proposed").get()
    assert (proposed.actor_user, proposed.tool, proposed.data["change"]) == (gina, TOOL, change.pk)
    assert (proposed.data["before"]["hitl_tier"], proposed.data["after"]["hitl_tier"]) == ("high", "low")


def test_a_second_governance_admin_confirms_and_the_change_applies(gina, gwen, catalog):
    change = registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina).change
    registry_changes.confirm(change.pk, user=gwen)
    assert tool_row().hitl_tier == "low"
    change.refresh_from_db()
    assert (change.status, change.decided_by) == ("confirmed", gwen)
    seeded, *rows = registry_audit().filter(tool=TOOL).values_list("decision", "actor")
    assert seeded[0] == "created"
    assert rows == [("proposed", "user:gina"), ("updated", "user:gwen"), ("confirmed", "user:gwen")]


def test_the_proposer_cannot_confirm_their_own_change(gina, catalog):
    change = registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina).change
    with pytest.raises(ToolChangeNeedsSecondAdmin):
        registry_changes.confirm(change.pk, user=gina)
    assert tool_row().hitl_tier == "high"
    assert ToolChange.objects.get().status == "pending"


def test_the_database_refuses_a_change_confirmed_by_its_proposer(gina, catalog):
    change = registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina).change
    with pytest.raises(IntegrityError), transaction.atomic():
        ToolChange.objects.filter(pk=change.pk).update(
            status="confirmed", decided_by=gina, decided_at=change.proposed_at
        )


def test_compliance_can_neither_propose_nor_confirm(carl, gina, catalog):
    with pytest.raises(NotGovernanceAdmin):
        registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=carl)
    change = registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina).change
    with pytest.raises(NotGovernanceAdmin):
        registry_changes.confirm(change.pk, user=carl)
    assert tool_row().hitl_tier == "high"


def test_a_rejected_change_leaves_the_registry_as_it_was(gina, gwen, catalog):
    change = registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina).change
    registry_changes.reject(change.pk, user=gwen, reason="prescriptions stay high")
    assert tool_row().hitl_tier == "high"
    rejected = registry_audit("rejected").get()
    assert (rejected.actor_user, rejected.data["reason"], rejected.data["proposed_by"]) == (
        gwen,
        "prescriptions stay high",
        "gina",
    )


def test_a_proposal_made_stale_by_another_change_cannot_be_confirmed(gina, gwen, catalog):
    change = registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina).change
    registry_changes.submit(TOOL, {"description": "Prescribe (edited)"}, user=gwen)  # not lowering: applies
    with pytest.raises(ToolChangeStale):
        registry_changes.confirm(change.pk, user=gwen)
    assert tool_row().hitl_tier == "high"


def test_one_pending_change_per_tool(gina, gwen, catalog):
    registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina)
    with pytest.raises(ToolChangeAlreadyPending):
        registry_changes.submit(TOOL, {"allowed_hosts": ["x.example"]}, user=gwen)
    assert ToolChange.objects.count() == 1


def test_a_change_that_does_not_lower_risk_applies_at_once(gina, catalog):
    submitted = registry_changes.submit("record_vitals", {"hitl_tier": "high"}, user=gina)
    assert submitted.change is None and tool_row("record_vitals").hitl_tier == "high"
    assert not ToolChange.objects.exists()


# --- the admin -------------------------------------------------------------------------------


def test_lowering_a_tier_in_the_admin_shows_the_proposal_and_changes_nothing(gina, catalog):
    http = admin_client(gina)
    response = post(http, change_url(tool_row()), {**TOOL_FORM, "hitl_tier": "low"})
    change = ToolChange.objects.get()
    assert response.status_code == 302 and response["Location"] == change_url(change)
    assert tool_row().hitl_tier == "high"
    page = http.get(change_url(change))
    assert b"This change lowers risk" in page.content and b"tier high" in page.content
    assert page.context["impact"].loosened_cells > 0
    assert b"Confirm: apply this change" not in page.content  # not for its proposer


def test_a_second_admin_confirms_in_the_admin(gina, gwen, catalog):
    post(admin_client(gina), change_url(tool_row()), {**TOOL_FORM, "hitl_tier": "low"})
    change = ToolChange.objects.get()
    http = admin_client(gwen)
    assert b"Confirm: apply this change" in http.get(change_url(change)).content
    response = post(http, f"/admin/registry/toolchange/{change.pk}/confirm/", {})
    assert response.status_code == 302
    assert tool_row().hitl_tier == "low"


def test_the_proposer_confirming_in_the_admin_changes_nothing(gina, catalog):
    http = admin_client(gina)
    post(http, change_url(tool_row()), {**TOOL_FORM, "hitl_tier": "low"})
    change = ToolChange.objects.get()
    response = post(http, f"/admin/registry/toolchange/{change.pk}/confirm/", {})
    assert response.status_code == 302
    assert tool_row().hitl_tier == "high"
    assert b"other than its proposer" in http.get(change_url(change)).content


def test_compliance_reads_proposals_but_cannot_decide_them(carl, gina, catalog):
    change = registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina).change
    http = admin_client(carl)
    assert http.get("/admin/registry/toolchange/").status_code == 200
    page = http.get(change_url(change))
    assert page.status_code == 200 and b"Confirm: apply" not in page.content and b"Reject" not in page.content
    assert post(http, f"/admin/registry/toolchange/{change.pk}/confirm/", {}).status_code == 403
    assert post(http, f"/admin/registry/toolchange/{change.pk}/reject/", {}).status_code == 403
    assert ToolChange.objects.get().status == "pending"


def test_a_second_proposal_for_the_same_tool_is_refused_in_words(gina, gwen, catalog):
    registry_changes.submit(TOOL, {"hitl_tier": "low"}, user=gina)
    http = admin_client(gwen)
    response = post(http, change_url(tool_row()), {**TOOL_FORM, "hitl_tier": "high", "allowed_hosts": '["x.example"]'})
    assert response.status_code == 302
    assert b"already waiting for confirmation" in http.get(response["Location"]).content
    assert ToolChange.objects.count() == 1 and tool_row().allowed_hosts == []


def test_preview_shows_the_truth_table_before_and_after_and_saves_nothing(gina, catalog):
    audited = registry_audit().count()
    response = post(admin_client(gina), change_url(tool_row()), {**TOOL_FORM, "hitl_tier": "low", "_preview": "1"})
    assert response.status_code == 200
    impact = response.context["impact"]
    assert impact.loosened_cells > 0
    cell = next(
        cells[0]
        for ctx, cells in impact.rows
        if (ctx.autonomy, ctx.tainted, ctx.consent, ctx.age_band) == ("autonomous", False, True, "adult")
    )
    assert (cell.before.rule_id, cell.after.rule_id) == (
        "mutate.high-tier-always-approval",
        "mutate.low-tier-autonomous-allow",
    )
    assert b"condor-loosened" in response.content
    assert tool_row().hitl_tier == "high"
    assert registry_audit().count() == audited and not ToolChange.objects.exists()


def test_preview_of_an_invalid_edit_shows_the_error(gina, catalog):
    response = post(admin_client(gina), change_url(tool_row()), {**TOOL_FORM, "hitl_tier": "", "_preview": "1"})
    assert response.status_code == 200
    assert b"A mutate tool must declare its HITL tier" in response.content
    assert "impact" not in response.context


def test_compliance_cannot_preview(carl, catalog):
    response = post(admin_client(carl), change_url(tool_row()), {**TOOL_FORM, "_preview": "1"})
    assert response.status_code == 403


# --- the commands ----------------------------------------------------------------------------


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_register_tool_refuses_a_lowering_change_without_a_governance_admin(catalog):
    with pytest.raises(CommandError, match="lowers risk"):
        run("register_tool", TOOL, "--tier", "low")
    assert tool_row().hitl_tier == "high" and not ToolChange.objects.exists()


def test_register_tool_proposes_and_confirm_tool_change_applies(gina, gwen, catalog):
    out = run("register_tool", TOOL, "--tier", "low", "--by", "gina")
    change = ToolChange.objects.get()
    assert f"Proposed change {change.pk}" in out and f"confirm_tool_change {change.pk}" in out
    assert "mutate.high-tier-always-approval -> mutate.low-tier-autonomous-allow" in out  # the impact, first
    assert tool_row().hitl_tier == "high"
    with pytest.raises(CommandError, match="tool_change_needs_second_admin"):
        run("confirm_tool_change", str(change.pk), "--by", "gina")
    run("confirm_tool_change", str(change.pk), "--by", "gwen")
    assert tool_row().hitl_tier == "low"


def test_confirm_tool_change_can_reject(gina, gwen, catalog):
    run("register_tool", TOOL, "--allowed-host", "pharmacy.example", "--by", "gina")
    change = ToolChange.objects.get()
    assert "allowed hosts added: pharmacy.example" in change.reasons
    run("confirm_tool_change", str(change.pk), "--by", "gwen", "--reject", "--reason", "unknown pharmacy")
    assert ToolChange.objects.get().status == "rejected" and tool_row().allowed_hosts == []


def test_register_tool_by_a_non_governance_user_is_refused(carl, catalog):
    with pytest.raises(CommandError, match="not a governance admin"):
        run("register_tool", TOOL, "--tier", "low", "--by", "carl")


def test_register_tool_applies_a_raise_at_once_even_without_by(catalog):
    run("register_tool", "record_vitals", "--tier", "high")
    assert tool_row("record_vitals").hitl_tier == "high"


def test_seeding_still_applies_directly(db):
    # The internal write path, for seeds (as seed_tools, a named actor).
    register("amend_allergy", policy_class="mutate", hitl_tier="low", actor_system="command:seed_tools")
    assert tool_row("amend_allergy").hitl_tier == "low"
