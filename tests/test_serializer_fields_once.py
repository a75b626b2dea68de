"""Serializers that build their fields once per class (core/serializers.py).

Answers (ReadOnlyModelSerializer) must be exactly what DRF's ModelSerializer, building
its fields for every instance, writes: for approvals in every state a hot path answers
with, and for runs. Each instance binds fields of its own, so method fields answer for
their own row. Request bodies (StrictSerializer) must validate, and fail, exactly as
with DRF's deep copies of the declared fields.
"""

import pytest
from django.core.exceptions import ImproperlyConfigured
from rest_framework import serializers

from approvals.models import Approval
from approvals.serializers import ApprovalSerializer, ClarificationSerializer, ResumeSerializer, ToolCallSerializer
from core.serializers import ReadOnlyModelSerializer
from runs.models import Run
from runs.serializers import RunSerializer
from tests.helpers.approval_loop import approve, park, resume
from tests.helpers.http import post_json
from tests.helpers.runs import open_executing_run

pytestmark = pytest.mark.django_db


def fields_per_instance(serializer_class):
    """`serializer_class` with DRF's own get_fields and to_representation: every instance builds its
    fields from the model and walks each field's source."""
    return type(
        f"PerInstance{serializer_class.__name__}",
        (serializer_class,),
        {
            "get_fields": serializers.ModelSerializer.get_fields,
            "to_representation": serializers.ModelSerializer.to_representation,
        },
    )


@pytest.fixture
def approvals_in_every_state(api, catalog, reviewer_http):
    run_id = open_executing_run(api)
    pending = park(api, run_id)
    claimed = park(api, run_id, args={"drug": "ibuprofen", "dose": "200 mg", "route": "oral", "days": 3})
    assert post_json(reviewer_http, f"/api/v1/approvals/{claimed['id']}/claim/", {}).status_code == 200
    consumed = park(api, run_id, args={"drug": "paracetamol", "dose": "1 g", "route": "oral", "days": 2})
    approve(reviewer_http, consumed["id"])
    approved = park(api, run_id, args={"drug": "cefalexin", "dose": "250 mg", "route": "oral", "days": 5})
    approve(reviewer_http, approved["id"])
    assert (
        resume(
            api, run_id, consumed["id"], args={"drug": "paracetamol", "dose": "1 g", "route": "oral", "days": 2}
        ).status_code
        == 200
    )
    ids = [pending["id"], claimed["id"], approved["id"], consumed["id"]]
    rows = Approval.objects.select_related("decided_by", "claimed_by").in_bulk(ids)
    assert {rows[pk].status for pk in rows} == {"pending", "approved", "consumed"}
    return [rows[pk] for pk in Approval.objects.filter(pk__in=ids).values_list("pk", flat=True)]


def test_an_approval_is_written_as_drf_writes_it(approvals_in_every_state):
    reference = fields_per_instance(ApprovalSerializer)
    answers = [ApprovalSerializer(approval).data for approval in approvals_in_every_state]
    assert answers == [reference(approval).data for approval in approvals_in_every_state]
    # Fields of its own per instance: each answer names its own row and its own reviewer.
    assert [answer["id"] for answer in answers] == [str(approval.pk) for approval in approvals_in_every_state]
    assert any(answer["claimed_by"] for answer in answers) and not all(answer["claimed_by"] for answer in answers)


def test_a_run_is_written_as_drf_writes_it(approvals_in_every_state):
    runs = list(Run.objects.all())
    assert runs
    reference = fields_per_instance(RunSerializer)
    assert [RunSerializer(run).data for run in runs] == [reference(run).data for run in runs]
    assert RunSerializer(runs, many=True).data == [reference(run).data for run in runs]


def test_a_writable_field_is_refused(api, catalog):
    class SummaryIn(ReadOnlyModelSerializer):
        class Meta:
            model = Run
            fields = ["summary"]

    run = Run.objects.get(pk=open_executing_run(api))
    with pytest.raises(ImproperlyConfigured):
        _ = SummaryIn(run).data


def fields_deep_copied(serializer_class):
    """`serializer_class` with DRF's own Serializer.get_fields: deep copies of the declared fields."""
    return type(
        f"DeepCopied{serializer_class.__name__}", (serializer_class,), {"get_fields": serializers.Serializer.get_fields}
    )


BODIES = {
    ToolCallSerializer: [
        {"tool_call_id": "c-1", "step_id": "s", "tool": "get_patient_summary", "op": "", "args": {"p": 1}},
        {"tool_call_id": "c 1", "step_id": "", "tool": "Bad Tool!", "args": []},
        {"tool_call_id": "c-1", "step_id": "s", "tool": "t", "args": {}, "metadata": {"k": "v"}, "extra": 1},
        {"tool_call_id": "c-2" * 60, "step_id": "s", "tool": "t", "op": "x" * 61, "args": {}},
        {},
    ],
    ResumeSerializer: [
        {"approval_id": "00000000-0000-0000-0000-000000000000", "args": {"a": 1}},
        {"approval_id": "not-a-uuid", "args": None},
    ],
    ClarificationSerializer: [  # a ListField inside: DRF's deep copies, as before
        {"tool_call_id": "c-1", "step_id": "s", "tool": "t", "message": "Which route?", "missing": [{"name": "route"}]},
        {"tool_call_id": "c-1", "step_id": "s", "tool": "t", "message": "Which route?", "missing": ["route"]},
    ],
}


@pytest.mark.parametrize("serializer_class", list(BODIES))
def test_a_body_validates_and_fails_as_with_drfs_copies(serializer_class):
    reference = fields_deep_copied(serializer_class)
    for body in BODIES[serializer_class] * 2:  # twice: the second round runs on the kept fields
        ours, theirs = serializer_class(data=body), reference(data=body)
        assert ours.is_valid() == theirs.is_valid(), body
        assert ours.errors == theirs.errors, body
        assert ours.validated_data == theirs.validated_data, body


def test_the_answers_are_read_off_a_plan_made_once_per_class(approvals_in_every_state):
    from core.serializers import representation_plan_of

    for serializer_class, instance in (
        (ApprovalSerializer, approvals_in_every_state[0]),
        (RunSerializer, Run.objects.first()),
    ):
        serializer = serializer_class(instance)
        assert representation_plan_of(serializer) is not None and representation_plan_of(
            serializer
        ) is representation_plan_of(serializer_class(instance))
        assert serializer.data and "fields" not in serializer.__dict__  # no field was bound for this instance


def test_a_field_the_plan_cannot_take_leaves_the_class_to_drf(api, catalog):
    class WithSessionTitle(ReadOnlyModelSerializer):
        title = serializers.CharField(source="session.title", read_only=True)

        class Meta:
            model = Run
            fields = ["id", "title"]

    run = Run.objects.select_related("session").get(pk=open_executing_run(api))
    assert WithSessionTitle(run).data == {"id": str(run.pk), "title": run.session.title}
    assert WithSessionTitle._representation_plan is None
