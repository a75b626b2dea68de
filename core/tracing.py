"""OpenTelemetry spans around the hot decisions: gate, clarification, decision, resume.

Only `opentelemetry-api` is a dependency. Without a configured SDK (say
`opentelemetry-instrument` with an exporter, or a TracerProvider set at start-up)
its tracer is a no-op, so the spans cost a few attribute writes. With one, every
gate call, decision and resume is a span carrying the run, approval, verdict,
rule and HTTP status, whatever the outcome.

A middleware rather than decorators on the services: the span covers the whole
request as the client saw it (authentication, locks, commit, the after-commit
push), and the services stay free of tracing code.
"""

from django.urls import Resolver404, resolve
from opentelemetry import trace

# URL name → span name. Only these paths are traced; everything else passes by untouched.
TRACED = {
    "tool-call-gate": "condor.gate",
    "clarification": "condor.clarification",
    "approval-decision": "condor.decision",
    "run-resume": "condor.resume",
}
_RESULT_KEYS = ("decision", "rule_id", "status", "error")


def _tracing_configured() -> bool:
    """Whether spans go anywhere: a TracerProvider was set (in code, by an SDK or through
    OTEL_PYTHON_TRACER_PROVIDER). Without one, the API hands out non-recording spans, and
    resolving the path and opening such a span on every request would be work for nothing."""
    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def _tracer():
    # Looked up per request: a TracerProvider set after import (tests, late SDK set-up) is used.
    return trace.get_tracer("condor")


class TracingMiddleware:
    """The span opens and closes inside one call: under ASGI each middleware hook may run in a
    context of its own, so a context attached in `process_view` could not be detached in `__call__`."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not _tracing_configured():
            return self.get_response(request)  # no SDK: the spans would record nothing
        try:
            match = resolve(request.path_info, getattr(request, "urlconf", None))
        except Resolver404:
            match = None
        name = TRACED.get(match.url_name) if match is not None else None
        if name is None:
            return self.get_response(request)
        with _tracer().start_as_current_span(name, kind=trace.SpanKind.SERVER) as span:
            for key in ("run_id", "approval_id"):
                if key in match.kwargs:
                    span.set_attribute(f"condor.{key}", str(match.kwargs[key]))
            response = self.get_response(request)
            _record_response(span, response)
        return response


def _record_response(span, response) -> None:
    span.set_attribute("http.response.status_code", response.status_code)
    data = getattr(response, "data", None)
    if isinstance(data, dict):
        for key in _RESULT_KEYS:
            if isinstance(data.get(key), str):
                span.set_attribute(f"condor.{key}", data[key])
        approval = data.get("approval")
        if isinstance(approval, dict) and isinstance(approval.get("id"), str):
            span.set_attribute("condor.approval_id", approval["id"])
    if response.status_code >= 500:
        span.set_status(trace.Status(trace.StatusCode.ERROR))
