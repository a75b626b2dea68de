"""OpenTelemetry spans around gate, decision and resume, when an SDK is configured (SPEC section 7)."""

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.helpers.approval_loop import approve, gate, resume, suspend
from tests.helpers.runs import open_executing_run

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="module")
def exporter():
    # The global provider can be set once per process; the middleware looks it up per request.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    trace.set_tracer_provider(provider)
    return _EXPORTER


@pytest.fixture
def spans(exporter):
    exporter.clear()
    return exporter


def by_name(spans, name):
    return [span for span in spans.get_finished_spans() if span.name == name]


def test_a_gate_call_is_a_span_with_its_verdict(api, catalog, spans):
    run_id = open_executing_run(api, autonomy="autonomous", age_band="adult")
    gate(api, run_id, tool="record_vitals", args={"heart_rate": 72})
    (span,) = by_name(spans, "condor.gate")
    assert span.attributes["condor.run_id"] == run_id
    assert span.attributes["condor.decision"] == "allow"
    assert span.attributes["condor.rule_id"] == "mutate.low-tier-autonomous-allow"
    assert span.attributes["http.response.status_code"] == 200


def test_suspend_decision_and_resume_are_spans(api, catalog, reviewer_http, spans):
    run_id = open_executing_run(api)
    approval = suspend(api, run_id)
    approve(reviewer_http, approval["id"])
    assert resume(api, run_id, approval["id"]).status_code == 200
    (parked,) = by_name(spans, "condor.gate")
    assert (parked.attributes["condor.decision"], parked.attributes["condor.approval_id"]) == (
        "suspended",
        approval["id"],
    )
    (decision,) = by_name(spans, "condor.decision")
    assert (decision.attributes["condor.approval_id"], decision.attributes["condor.status"]) == (
        approval["id"],
        "approved",
    )
    (resumed,) = by_name(spans, "condor.resume")
    assert resumed.attributes["http.response.status_code"] == 200


def test_a_refusal_is_a_span_with_its_error_code(api, catalog, spans):
    run_id = open_executing_run(api)
    response = resume(api, run_id, "00000000-0000-0000-0000-000000000000")
    assert response.status_code == 404
    (span,) = by_name(spans, "condor.resume")
    assert span.attributes["condor.error"] == "not_found"


def test_other_endpoints_are_not_traced(api, catalog, spans):
    open_executing_run(api)
    assert spans.get_finished_spans() == ()


def test_without_a_tracer_provider_no_span_is_opened(api, catalog, monkeypatch):
    """No SDK configured: the middleware lets the request by without resolving its path for a span."""
    from core import tracing

    def no_resolving(*args, **kwargs):
        raise AssertionError("resolved a path for a span nothing would record")

    monkeypatch.setattr(tracing.trace, "get_tracer_provider", lambda: trace.ProxyTracerProvider())
    monkeypatch.setattr(tracing, "resolve", no_resolving)
    run_id = open_executing_run(api)
    assert gate(api, run_id, tool="get_patient_summary", op="", args={"patient_id": "p-1"}).status_code == 200
