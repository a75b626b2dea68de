"""The tool registry (SPEC sections 2 and 8): a mutate tool declares its tier, every change is audited."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from audit.models import AuditEvent
from registry.descriptors import register, seed_static_catalog
from registry.models import ToolDescriptor
from registry.policy import STATIC_REGISTRY, ToolSpec


def registry_changes():
    return AuditEvent.objects.filter(kind=AuditEvent.Kind.REGISTRY_CHANGE)


# --- mutate needs a tier: database and model validation --------------------------------------


def test_the_database_refuses_a_mutate_tool_without_a_tier(db):
    with pytest.raises(IntegrityError, match="mutate_tool_declares_tier"), transaction.atomic():
        ToolDescriptor.objects.create(name="amend_allergy", policy_class="mutate")
    assert not ToolDescriptor.objects.exists()


def test_the_database_refuses_dropping_the_tier_of_a_mutate_tool(db):
    tool = ToolDescriptor.objects.create(name="amend_allergy", policy_class="mutate", hitl_tier="low")
    with pytest.raises(IntegrityError, match="mutate_tool_declares_tier"), transaction.atomic():
        ToolDescriptor.objects.filter(pk=tool.pk).update(hitl_tier=None)
    tool.refresh_from_db()
    assert tool.hitl_tier == "low"


def test_the_database_refuses_turning_a_tierless_tool_into_a_mutate_tool(db):
    tool = ToolDescriptor.objects.create(name="amend_allergy", policy_class="read")
    with pytest.raises(IntegrityError, match="mutate_tool_declares_tier"), transaction.atomic():
        ToolDescriptor.objects.filter(pk=tool.pk).update(policy_class="mutate")


def test_the_database_refuses_a_mutate_tool_with_a_blank_tier(db):
    # An empty string is not NULL: "declares a tier" means low or high.
    with pytest.raises(IntegrityError, match="mutate_tool_declares_tier"), transaction.atomic():
        ToolDescriptor.objects.create(name="amend_allergy", policy_class="mutate", hitl_tier="")
    assert not ToolDescriptor.objects.exists()


def test_the_database_refuses_blanking_the_tier_of_a_mutate_tool(db):
    tool = ToolDescriptor.objects.create(name="amend_allergy", policy_class="mutate", hitl_tier="high")
    with pytest.raises(IntegrityError, match="mutate_tool_declares_tier"), transaction.atomic():
        ToolDescriptor.objects.filter(pk=tool.pk).update(hitl_tier="")
    tool.refresh_from_db()
    assert tool.hitl_tier == "high"


def test_tools_of_other_classes_need_no_tier(db):
    for name, policy_class in [("lookup", "read"), ("run_script", "exec"), ("fax", "comms"), ("legacy", None)]:
        ToolDescriptor.objects.create(name=name, policy_class=policy_class)
    assert ToolDescriptor.objects.count() == 4


def test_full_clean_says_in_words_that_a_mutate_tool_needs_a_tier(db):
    with pytest.raises(ValidationError) as error:
        ToolDescriptor(name="amend_allergy", policy_class="mutate").full_clean()
    assert error.value.message_dict["hitl_tier"] == ["A mutate tool must declare its HITL tier: low or high."]


@pytest.mark.parametrize("hosts", [["ok.example", ""], "fax.example", [42]])
def test_full_clean_refuses_allowed_hosts_that_are_not_a_list_of_names(db, hosts):
    with pytest.raises(ValidationError) as error:
        ToolDescriptor(name="fax", policy_class="comms", allowed_hosts=hosts).full_clean()
    assert "allowed_hosts" in error.value.message_dict


@pytest.mark.parametrize("metadata", [{"limit": 1e16}, {"ids": [2**53]}, {"n": {"m": -1e300}}])
def test_full_clean_refuses_metadata_numbers_the_audit_log_could_not_verify(db, metadata):
    with pytest.raises(ValidationError) as error:
        ToolDescriptor(name="fax", policy_class="read", metadata=metadata).full_clean()
    assert "metadata" in error.value.message_dict


# --- ToolDescriptor.to_spec ------------------------------------------------------------------


def test_to_spec_hands_the_engine_plain_data(db):
    tool = ToolDescriptor(
        name="fax_letter",
        policy_class="comms",
        trust="untrusted",
        allowed_hosts=["fax.example"],
        metadata={"vendor": "acme"},
        description="Fax it.",
    )
    assert tool.to_spec() == ToolSpec(
        name="fax_letter",
        policy_class="comms",
        hitl_tier=None,
        trust="untrusted",
        allowed_hosts=("fax.example",),
        metadata={"vendor": "acme"},
        description="Fax it.",
    )


def test_to_spec_reads_blank_class_and_tier_as_undeclared(db):
    spec = ToolDescriptor(name="legacy", policy_class="", hitl_tier="").to_spec()
    assert spec.policy_class is None and spec.hitl_tier is None


# --- register(): the one audited write path --------------------------------------------------

COMMAND = "command:register_tool"


def test_registering_a_new_tool_is_audited_as_created(db, rita):
    tool, created = register("amend_allergy", actor_user=rita, policy_class="mutate", hitl_tier="low")
    assert created and tool.pk is not None
    change = registry_changes().get()
    assert (change.tool, change.decision, change.actor_user, change.actor) == (
        "amend_allergy",
        "created",
        rita,
        "user:rita",
    )
    assert change.data["before"] is None
    assert change.data["after"]["hitl_tier"] == "low"


def test_changing_a_tool_is_audited_with_before_and_after(db):
    register("amend_allergy", actor_system=COMMAND, policy_class="mutate", hitl_tier="low")
    register("amend_allergy", actor_system=COMMAND, hitl_tier="high")
    change = registry_changes().order_by("-id").first()
    assert change.decision == "updated"
    assert (change.data["before"]["hitl_tier"], change.data["after"]["hitl_tier"]) == ("low", "high")
    assert change.actor == "command:register_tool"  # a named system actor, never a bare "system"


def test_registering_the_same_values_again_writes_no_audit_row(db):
    register("amend_allergy", actor_system=COMMAND, policy_class="mutate", hitl_tier="low")
    _, created = register("amend_allergy", actor_system=COMMAND, policy_class="mutate", hitl_tier="low")
    assert not created
    assert registry_changes().count() == 1


def test_an_invalid_registration_stores_nothing_and_audits_nothing(db):
    with pytest.raises(ValidationError):
        register("amend_allergy", actor_system=COMMAND, policy_class="mutate")
    assert not ToolDescriptor.objects.exists()
    assert not registry_changes().exists()


def test_an_invalid_change_leaves_the_tool_as_it_was(db):
    register("amend_allergy", actor_system=COMMAND, policy_class="mutate", hitl_tier="low")
    with pytest.raises(ValidationError):
        register("amend_allergy", actor_system=COMMAND, hitl_tier=None)
    assert ToolDescriptor.objects.get(name="amend_allergy").hitl_tier == "low"
    assert registry_changes().count() == 1


# --- seed_static_catalog ---------------------------------------------------------------------


def test_seeding_mirrors_the_static_registry(db):
    assert seed_static_catalog() == len(STATIC_REGISTRY)
    stored = {tool.name: tool.to_spec() for tool in ToolDescriptor.objects.all()}
    assert stored == dict(STATIC_REGISTRY)


def test_seeding_twice_adds_nothing_the_second_time(db):
    seed_static_catalog()
    audited = registry_changes().count()
    assert seed_static_catalog() == 0
    assert ToolDescriptor.objects.count() == len(STATIC_REGISTRY)
    assert registry_changes().count() == audited == len(STATIC_REGISTRY)


def test_seeding_leaves_a_governance_edit_alone(db):
    name = next(name for name, spec in STATIC_REGISTRY.items() if spec.hitl_tier == "high")
    register(name, actor_system=COMMAND, policy_class="mutate", hitl_tier="low")
    seed_static_catalog()
    assert ToolDescriptor.objects.get(name=name).hitl_tier == "low"
