"""OpenAPI extras for drf-spectacular: error responses, strict request bodies, the SSE stream.

Imported from CondorConfig.ready(), so its extensions are registered before the first schema
is generated. The authentication schemes are the agents app's (agents/schema.py).
"""

from drf_spectacular.extensions import OpenApiSerializerExtension, OpenApiSerializerFieldExtension
from drf_spectacular.utils import OpenApiResponse

from core.errors import STABLE_CODES
from core.serializers import ErrorSerializer

API_KEY_SCHEME = "ApiKeyAuth"

_ERROR_MEANINGS = {
    400: "invalid_payload: the body is not strict JSON or does not match the request schema; nothing was stored.",
    401: "not_authenticated: the API key is missing or not valid.",
    403: "permission_denied: this caller may not do this.",
    404: "not_found: no such object, or it belongs to another client.",
    409: "A state conflict; `error` names it (see the operation's description).",
    410: "approval_expired: the approval is past its deadline.",
    411: "length_required: a chunked body under a WSGI server that cannot say where it ends; send a Content-Length.",
    413: "payload_too_large: the body is over CONDOR_MAX_BODY_BYTES; it was not read.",
    422: "The request is well-formed but refused; `error` names why.",
    429: "throttled: this client is over its request rate (retry after `Retry-After` seconds); "
    "too_many_pending: it already has the most open approvals it may have.",
    503: "database_unavailable: Condor cannot reach its database; retry after `Retry-After` seconds.",
}


class StrictRequestSchema(OpenApiSerializerExtension):
    """A StrictSerializer answers an unknown field with 400, so its schema admits none."""

    target_class = "core.serializers.StrictSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        return {**schema, "additionalProperties": False}


class JSONObjectSchema(OpenApiSerializerFieldExtension):
    """JSONObjectField refuses anything but an object (400); drf-spectacular would say "any JSON"."""

    target_class = "core.serializers.JSONObjectField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        return {"type": "object", "additionalProperties": {}}


def errors(*statuses: int, **meanings: str) -> dict:
    """Error responses for extend_schema: each is `{"error", "detail"}`.

    `meanings` overrides the description per status, keyed `e409="..."`.
    """
    return {
        status: OpenApiResponse(ErrorSerializer, description=meanings.get(f"e{status}", _ERROR_MEANINGS[status]))
        for status in statuses
    }


_SSE_EVENT = {
    "type": "object",
    "description": "One server-sent event (heartbeats are comment lines, not events).",
    "properties": {
        "data": {"type": "string", "description": "A UI message chunk as compact JSON, or `[DONE]` last."},
        "id": {
            "type": "string",
            "pattern": r"^[0-9]+\.[0-9]+$",
            "description": "`<event>.<frame>`, for Last-Event-ID; absent on the start and finish chunks.",
        },
        "event": {"type": "string", "enum": ["message"]},
    },
    "required": ["data"],
}


def document_run_stream(result, generator, request, public):
    """Postprocessing hook: the SSE stream is a plain async view drf-spectacular cannot see."""
    error = {"$ref": "#/components/schemas/Error"}
    result.setdefault("components", {}).setdefault("schemas", {}).setdefault(
        "Error",
        {
            "type": "object",
            "properties": {"error": {"type": "string", "enum": list(STABLE_CODES)}, "detail": {"type": "string"}},
            "required": ["error", "detail"],
        },
    )
    result.setdefault("paths", {})["/api/v1/runs/{run_id}/stream"] = {
        "get": {
            "operationId": "runs_stream",
            "summary": "Follow a run as an AI SDK v6 UI message stream (server-sent events).",
            "description": (
                "Replays the run's persisted frames, then follows it live. Each event is `data: <json chunk>` "
                "with an `id` usable as `Last-Event-ID`; `start` and `finish` chunks frame the stream and "
                "`data: [DONE]` ends it once the run is terminal."
            ),
            "tags": ["runs"],
            "parameters": [
                {"in": "path", "name": "run_id", "required": True, "schema": {"type": "string", "format": "uuid"}},
                {
                    "in": "header",
                    "name": "Last-Event-ID",
                    "required": False,
                    "schema": {"type": "string"},
                    "description": "Resume after this event id (`<event>.<frame>`).",
                },
            ],
            "security": [{API_KEY_SCHEME: []}],
            "responses": {
                "200": {
                    "description": "The UI message stream.",
                    "headers": {"x-vercel-ai-ui-message-stream": {"schema": {"type": "string", "enum": ["v1"]}}},
                    # Before OpenAPI 3.2 (itemSchema), an event stream's `schema` describes one event.
                    "content": {"text/event-stream": {"schema": _SSE_EVENT}},
                },
                "400": {
                    "description": "stream_requires_asgi: this server speaks WSGI; the stream is served "
                    "by daphne (condor.asgi:application) only.",
                    "content": {"application/json": {"schema": error}},
                },
                "401": {"description": _ERROR_MEANINGS[401], "content": {"application/json": {"schema": error}}},
                "404": {"description": _ERROR_MEANINGS[404], "content": {"application/json": {"schema": error}}},
            },
        }
    }
    return result


def document_not_authenticated(result, generator, request, public):
    """Postprocessing hook: every operation taking an API key can answer 401, documented or not.

    (Session-only endpoints answer a missing login with 403: there is no challenge to offer.)
    """
    error = {"$ref": "#/components/schemas/Error"}
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and {API_KEY_SCHEME: []} in operation.get("security", []):
                operation["responses"].setdefault(
                    "401",
                    {
                        "description": _ERROR_MEANINGS[401],
                        "content": {"application/json": {"schema": error}},
                    },
                )
    return result


def document_payload_too_large(result, generator, request, public):
    """Postprocessing hook: every operation that takes a body can answer 413 and 411 (core/body_limit.py)."""
    error = {"$ref": "#/components/schemas/Error"}
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                for status in (413, 411):
                    operation["responses"].setdefault(
                        str(status),
                        {
                            "description": _ERROR_MEANINGS[status],
                            "content": {"application/json": {"schema": error}},
                        },
                    )
    return result


_CONTROL_CHARACTERS = (
    "invalid_payload: a control character (NUL, a line break, any C0 or DEL) in the path or a "
    "query parameter; nothing was read."
)


def document_control_characters(result, generator, request, public):
    """Postprocessing hook: every operation can answer 400 for a control character in its path or query
    (core/request_limits.py), also one whose body and parameters are otherwise never refused."""
    error = {"$ref": "#/components/schemas/Error"}
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"].setdefault(
                    "400",
                    {
                        "description": _CONTROL_CHARACTERS,
                        "content": {"application/json": {"schema": error}},
                    },
                )
    return result


def document_limits(result, generator, request, public):
    """Postprocessing hook: any API-key operation can be throttled (429), any operation can meet a lost database (503)."""
    error = {"$ref": "#/components/schemas/Error"}
    retry_after = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}
    for item in result.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            statuses = [503]
            # The stream is a plain async view, outside DRF's throttles.
            if {API_KEY_SCHEME: []} in operation.get("security", []) and operation["operationId"] != "runs_stream":
                statuses.append(429)
            for status in statuses:
                operation["responses"].setdefault(
                    str(status),
                    {
                        "description": _ERROR_MEANINGS[status],
                        "headers": retry_after,
                        "content": {"application/json": {"schema": error}},
                    },
                )
    return result
