"""The client sends the agent's rationale as `metadata.rationale` (SPEC section 11): from
`run.gate(…, rationale=…)`, `run.ask`, `@gated(…, rationale=…)` (a string, or a callable of the
call's kwargs) and their AsyncCondor twins. An httpx MockTransport stands in for Condor and
records what each request carried."""

import asyncio
import json

import httpx
import pytest

WHY = "CURB-65 of 1; first-line oral antibiotic per the trust's pneumonia guideline."
PRESCRIPTION = {"patient_ref": "MRN-7", "drug": "amoxicillin", "dose_mg": 500}


class FakeCondor:
    """Answers what a run needs (open, execute, gate: allow, report, close) and keeps every body."""

    def __init__(self):
        self.bodies: dict[str, list[dict]] = {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content) if request.content else None
        path = request.url.path.removeprefix("/api/v1/")
        self.bodies.setdefault(path, []).append(body)
        if path == "sessions/":
            return httpx.Response(201, json={"id": "s1"})
        if path == "sessions/s1/runs/":
            return httpx.Response(201, json={"id": "r1"})
        if path == "sessions/s1/messages/":
            return httpx.Response(201, json={"id": "m1", **body})
        if path == "runs/r1/tool-calls/":
            return httpx.Response(
                200,
                json={
                    "decision": "allow",
                    "rule_id": "read.allow",
                    "explanation": "",
                    "tool_call_id": body["tool_call_id"],
                    "args": body["args"],
                },
            )
        return httpx.Response(200, json={"id": "r1"})  # transition, report, close

    def gated_metadata(self) -> list[dict | None]:
        return [body.get("metadata") for body in self.bodies["runs/r1/tool-calls/"]]


@pytest.fixture
def fake():
    return FakeCondor()


def sync_condor(fake):
    from condor_client import Condor

    return Condor("http://condor.test", "key", transport=httpx.MockTransport(fake))


def async_condor(fake):
    from condor_client import AsyncCondor

    return AsyncCondor("http://condor.test", "key", transport=httpx.MockTransport(fake))


def test_gate_sends_the_rationale_as_metadata(fake):
    with sync_condor(fake) as condor, condor.session().run() as run:
        run.gate("prescribe_medication", PRESCRIPTION, "create", WHY)
        run.gate("prescribe_medication", PRESCRIPTION, op="create", rationale=WHY, metadata={"model": "m-1"})
        run.gate("get_patient_summary", {"patient_ref": "MRN-7"})
    assert fake.gated_metadata() == [{"rationale": WHY}, {"model": "m-1", "rationale": WHY}, None]


def test_ask_sends_the_rationale_too(fake):
    with sync_condor(fake) as condor, condor.session().run() as run:
        run.ask("prescribe_medication", PRESCRIPTION, op="create", rationale=WHY)
    assert fake.gated_metadata() == [{"rationale": WHY}]


def test_a_rationale_that_is_not_text_is_refused_before_it_is_sent(fake):
    with sync_condor(fake) as condor, condor.session().run() as run, pytest.raises(TypeError):
        run.gate("prescribe_medication", PRESCRIPTION, op="create", rationale={"why": "nested"})
    assert "runs/r1/tool-calls/" not in fake.bodies


def test_the_async_client_sends_the_rationale(fake):
    async def main():
        async with async_condor(fake) as condor:
            session = await condor.session()
            async with session.run() as run:
                await run.gate("prescribe_medication", PRESCRIPTION, op="create", rationale=WHY)
                await run.ask("prescribe_medication", PRESCRIPTION, "create", "Second opinion.")

    asyncio.run(main())
    assert fake.gated_metadata() == [{"rationale": WHY}, {"rationale": "Second opinion."}]


def test_gated_sends_a_fixed_rationale(fake):
    from condor_client import gated

    @gated("prescribe_medication", op="create", rationale=WHY)
    def prescribe(*, patient_ref, drug, dose_mg):
        return {"ok": True}

    with sync_condor(fake) as condor, condor.session().run():
        prescribe(**PRESCRIPTION)
    assert fake.gated_metadata() == [{"rationale": WHY}]


def test_gated_asks_a_callable_for_each_calls_rationale(fake):
    from condor_client import gated

    @gated(
        "prescribe_medication",
        op="create",
        rationale=lambda drug, dose_mg, **_: f"{drug} {dose_mg} mg: first-line for pneumonia.",
    )
    def prescribe(*, patient_ref, drug, dose_mg):
        return {"ok": True}

    with sync_condor(fake) as condor, condor.session().run():
        prescribe(**PRESCRIPTION)
        prescribe(**{**PRESCRIPTION, "drug": "doxycycline", "dose_mg": 200})
    assert fake.gated_metadata() == [
        {"rationale": "amoxicillin 500 mg: first-line for pneumonia."},
        {"rationale": "doxycycline 200 mg: first-line for pneumonia."},
    ]


def test_gated_async_tools_send_their_rationale(fake):
    from condor_client import gated

    @gated("prescribe_medication", op="create", rationale=lambda **args: f"{args['drug']} for pneumonia.")
    async def prescribe(*, patient_ref, drug, dose_mg):
        return {"ok": True}

    async def main():
        async with async_condor(fake) as condor:
            session = await condor.session()
            async with session.run():
                await prescribe(**PRESCRIPTION)

    asyncio.run(main())
    assert fake.gated_metadata() == [{"rationale": "amoxicillin for pneumonia."}]


def test_a_session_stores_messages_of_the_turn(fake):
    with sync_condor(fake) as condor:
        session = condor.session()
        with session.run() as run:
            session.add_message("user", "Start amoxicillin for her chest infection.")
            session.add_message("assistant", parts=[{"type": "text", "text": "Prescribing."}], run=run)
    assert fake.bodies["sessions/s1/messages/"] == [
        {"role": "user", "parts": [{"type": "text", "text": "Start amoxicillin for her chest infection."}]},
        {"role": "assistant", "parts": [{"type": "text", "text": "Prescribing."}], "run": "r1"},
    ]


def test_the_async_session_stores_messages(fake):
    async def main():
        async with async_condor(fake) as condor:
            session = await condor.session()
            async with session.run() as run:
                await session.add_message("assistant", "Prescribing.", run=run)

    asyncio.run(main())
    assert fake.bodies["sessions/s1/messages/"] == [
        {"role": "assistant", "parts": [{"type": "text", "text": "Prescribing."}], "run": "r1"}
    ]
