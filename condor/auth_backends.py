"""Django's ModelBackend, loading a signed-in person together with whether they are a reviewer."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.db.models import Exists, OuterRef

from condor.auth import REVIEWERS


class ReviewerAwareModelBackend(ModelBackend):
    """`get_user` (every request of a signed-in person, every re-check of an inbox socket) reads the
    reviewers-group membership in the same query as the user, where `condor.auth.is_reviewer` finds
    it: a reviewer's request asks the database once, not twice, and the answer is as of this load,
    as before (a change of groups applies from the next request on)."""

    def get_user(self, user_id):
        model = get_user_model()
        membership = model.groups.through.objects.filter(user_id=OuterRef("pk"), group__name=REVIEWERS)
        user = model._default_manager.annotate(_condor_is_reviewer=Exists(membership)).filter(pk=user_id).first()
        return user if user is not None and self.user_can_authenticate(user) else None
