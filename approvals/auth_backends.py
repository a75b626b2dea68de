"""Django's ModelBackend, loading a signed-in person with whether they are a reviewer, and their review teams."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError

from agents.auth import REVIEWERS
from approvals.visibility import teams_column_sql, teams_from_column
from core.rows import column, columns, db_value, first_row, kept, reader, table


class ReviewerAwareModelBackend(ModelBackend):
    """`get_user` (every request of a signed-in person, every re-check of an inbox socket) reads the
    reviewers-group membership in the same query as the user, where `agents.auth.is_reviewer` finds
    it, and the review teams, where `approvals.visibility.reviewer_scope` finds them: a reviewer's
    request asks the database once, not three times, and the answers are as of this load,
    as before (a change of groups applies from the next request on). The statement is plain SQL
    from the models' `_meta`, its text kept per connection (core/rows.py `kept`)."""

    def get_user(self, user_id):
        model = get_user_model()
        try:
            pk = db_value(model, model._meta.pk.name, model._meta.pk.to_python(user_id))
        except ValidationError:  # a session naming no valid id is nobody's
            return None
        row = first_row(kept("auth-user-reviewer", lambda db: _user_sql(model, db), model=model), [REVIEWERS, pk])
        if row is None:
            return None
        user = reader(model)(row[:-2])
        user._condor_is_reviewer = bool(row[-2])  # SQLite answers EXISTS with 0 or 1
        user._condor_review_teams = teams_from_column(row[-1])
        return user if self.user_can_authenticate(user) else None


def _user_sql(model, db) -> str:
    membership = model.groups.through
    users, groups, memberships = table(model, db=db), table(Group, db=db), table(membership, db=db)
    user_id = column(model, model._meta.pk.name, users, db=db)
    reviewer = (
        f"EXISTS(SELECT 1 FROM {memberships} INNER JOIN {groups} ON ({column(Group, 'id', groups, db=db)} = "
        f"{column(membership, 'group', memberships, db=db)}) WHERE {column(membership, 'user', memberships, db=db)} "
        f"= {user_id} AND {column(Group, 'name', groups, db=db)} = %s)"
    )
    teams = teams_column_sql(db, user_id)
    return f"SELECT {columns(model, db=db)}, {reviewer}, {teams} FROM {users} WHERE {user_id} = %s"
