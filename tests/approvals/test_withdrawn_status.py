"""`withdrawn` is an approval status of its own (SPEC 4): the database knows it, and nothing else."""

import pytest
from django.db import IntegrityError, transaction

from approvals.models import Approval
from tests.helpers.approval_loop import parked_run


def test_the_database_takes_withdrawn_as_a_status(api):
    _, approval = parked_run(api)
    Approval.objects.filter(pk=approval["id"]).update(status="withdrawn")
    assert Approval.objects.get(pk=approval["id"]).status == "withdrawn"


def test_the_database_refuses_a_status_it_does_not_know(api):
    _, approval = parked_run(api)
    with pytest.raises(IntegrityError), transaction.atomic():
        Approval.objects.filter(pk=approval["id"]).update(status="vanished")
