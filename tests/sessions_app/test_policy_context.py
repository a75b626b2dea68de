"""A session's policy context speaks the policy engine's words, though sessions_app cannot import it."""

from registry.policy import AgeBand, Autonomy
from sessions_app.models.session import AgeBandChoice, AutonomyChoice


def test_the_autonomy_choices_are_the_policy_engines():
    assert sorted(AutonomyChoice.values) == sorted(member.value for member in Autonomy)


def test_the_age_band_choices_are_the_policy_engines():
    assert sorted(AgeBandChoice.values) == sorted(member.value for member in AgeBand)
