"""The page a locked-out sign-in gets (django-axes calls `locked_out`), for the inbox and admin logins alike."""

import math

from django.conf import settings
from django.shortcuts import render


def locked_out(request, original_response=None, credentials=None):
    seconds = settings.AXES_COOLOFF_TIME.total_seconds()
    response = render(
        request,
        "registration/locked_out.html",
        {
            "failure_limit": settings.AXES_FAILURE_LIMIT,
            "minutes": math.ceil(seconds / 60),
        },
        status=429,
    )
    response["Retry-After"] = str(math.ceil(seconds))
    return response
