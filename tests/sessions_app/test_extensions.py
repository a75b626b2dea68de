"""The slots the runs and approvals apps fill (sessions_app/extensions.py): filled at start-up, loud when empty."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from sessions_app import extensions


def test_every_slot_is_filled_once_the_apps_are_ready():
    slots = [value for value in vars(extensions).values() if isinstance(value, extensions.Slot)]
    assert slots and all(slot._function is not None for slot in slots)


def test_an_empty_slot_says_so_instead_of_doing_nothing():
    with pytest.raises(ImproperlyConfigured, match="the runs or approvals app fills it"):
        extensions.Slot("run_frames")(object())
