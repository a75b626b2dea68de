"""A JSON body built ahead of the response, answered as DRF's JSONRenderer would answer its value.

The history builds its body as text (runs/session_history.py) and skips the renderer, which would
only parse it to write it out again. What the renderer also does is honour an `indent` in the
Accept header (`application/json; indent=2`, as the browsable API and people with curl ask for it):
then, and only then, the body is parsed and rendered by the negotiated renderer, so the default path
stays a copy of bytes and an indented answer is exactly DRF's.
"""

import json

from django.http import HttpResponse


def prebuilt_json_response(request, body: bytes) -> HttpResponse:
    """`body` (UTF-8 JSON) as the answer to `request`, a DRF request after content negotiation."""
    media_type = getattr(request, "accepted_media_type", None) or ""
    if "indent" in media_type:  # a substring test: the common path parses no header parameters
        renderer = request.accepted_renderer
        if getattr(renderer, "get_indent", None) and renderer.get_indent(media_type, {}):
            body = renderer.render(json.loads(body), media_type, {})
    return HttpResponse(body, content_type="application/json")
