"""The personas still stand after a flush has emptied the groups the migrations made
(a transactional test without serialized rollback, then `--reuse-db`)."""

from django.contrib.auth.models import Group

from tests.helpers.personas import person


def test_a_persona_gets_its_group_as_the_migrations_made_it_after_a_flush(db):
    Group.objects.all().delete()
    carl = person("carl", "compliance")
    assert carl.has_perm("audit.view_auditevent")
    assert set(Group.objects.values_list("name", flat=True)) >= {"reviewers", "compliance", "governance"}
