"""Driving a session's conversation through the API."""

from tests.runs.helpers import post


def append(api, session_id, role="user", parts=None, **extra):
    body = {"role": role, "parts": parts if parts is not None else [{"type": "text", "text": "Hello"}], **extra}
    return post(api, f"/api/v1/sessions/{session_id}/messages/", body)


def report(api, run_id, tool_call_id, output=None, **extra):
    return post(api, f"/api/v1/runs/{run_id}/tool-calls/{tool_call_id}/result/", {"output": output, **extra})
