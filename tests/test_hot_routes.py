"""The agents' hot paths are found by the first patterns the resolver tries (condor/urls.py, condor/api_urls.py).

Django tries a URL conf's patterns in order, each a regular expression: with every
endpoint in one flat list a gate call was matched against some twenty before its own.
"""

import uuid

import pytest
from django.urls import resolve


@pytest.mark.parametrize(
    ("path", "name", "tried"),
    [
        ("runs/{id}/tool-calls/", "tool-call-gate", 1),
        ("runs/{id}/resume/", "run-resume", 2),
        ("approvals/{id}/decision/", "approval-decision", 2),
    ],
)
def test_a_hot_path_is_among_the_first_patterns_tried(path, name, tried):
    match = resolve("/api/v1/" + path.format(id=uuid.uuid4()))
    assert (match.url_name, len(match.tried)) == (name, tried)
