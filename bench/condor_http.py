"""A Condor server driven over HTTP only: an agent's key, a reviewer's browser session, the hot paths.

Nothing here imports Condor: bench/compare.py drives two checkouts whose modules may differ,
so everything goes through the public API, as an agent runtime and the inbox would.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass

from bench.http_load import checked, http_client

READ = {"patient_id": "p-1042"}
PRESCRIPTION = {"drug": "amoxicillin", "dose": "500 mg", "route": "oral", "days": 7}
STATEMENTS_HEADER = "X-Bench-Statements"  # bench/server/bench_statements.py


def allowed_call(tool_call_id: str) -> dict:
    return {"tool_call_id": tool_call_id, "step_id": "s", "tool": "get_patient_summary", "op": "", "args": READ}


def parking_call(tool_call_id: str, args: dict) -> dict:
    return {"tool_call_id": tool_call_id, "step_id": "s", "tool": "prescribe_medication", "op": "create", "args": args}


def prescription_args(i: int) -> dict:
    # A different payload each: every park is a card of its own.
    return {**PRESCRIPTION, "days": i + 1}


@dataclass(frozen=True)
class Parked:
    """An approval waiting in `run_id` for the call made with `args`."""

    run_id: str
    approval_id: str
    args: dict


class CondorHttp:
    """One served checkout: `base` its URL, `key` an API client's key, the reviewer's credentials."""

    def __init__(self, base: str, key: str, reviewer: str, password: str):
        self.base, self.key = base, key
        self.reviewer_cookies = self._log_in(reviewer, password)

    def agent(self):
        return http_client(self.base, headers={"Authorization": f"Api-Key {self.key}"})

    def reviewer(self):
        """A client with the reviewer's browser session, sending its CSRF token as the inbox does."""
        return http_client(
            self.base, cookies=self.reviewer_cookies, headers={"X-CSRFToken": self.reviewer_cookies["csrftoken"]}
        )

    def _log_in(self, username: str, password: str):
        with http_client(self.base) as browser:
            checked(browser.get("/accounts/login/"), 200)
            checked(
                browser.post(
                    "/accounts/login/",
                    data={
                        "username": username,
                        "password": password,
                        "csrfmiddlewaretoken": browser.cookies["csrftoken"],
                    },
                ),
                302,
            )
            return browser.cookies

    @staticmethod
    def executing_run(http) -> str:
        session = checked(http.post("/api/v1/sessions/", json={}), 201).json()
        run = checked(http.post(f"/api/v1/sessions/{session['id']}/runs/", json={}), 201).json()
        checked(http.post(f"/api/v1/runs/{run['id']}/transition/", json={"to": "executing"}), 200)
        return run["id"]

    # Each phase's requests: a list a client thread, each request a callable returning its response.

    def allow_requests(self, threads: int, n: int, tag: str) -> list[list]:
        """n allowed gate calls a thread, each thread in an executing run of its own."""

        def thread(t):
            http = self.agent()
            run_id = self.executing_run(http)
            return [
                lambda i=i: checked(
                    http.post(f"/api/v1/runs/{run_id}/tool-calls/", json=allowed_call(f"{tag}-{t}-{i}")), 200
                )
                for i in range(n)
            ]

        return [thread(t) for t in range(threads)]

    def suspend_requests(self, threads: int, n: int, tag: str) -> list[list]:
        """n prescriptions a thread that park (202), each thread in an executing run of its own."""

        def thread(t):
            http = self.agent()
            run_id = self.executing_run(http)
            return [
                lambda i=i: checked(
                    http.post(
                        f"/api/v1/runs/{run_id}/tool-calls/", json=parking_call(f"{tag}-{t}-{i}", prescription_args(i))
                    ),
                    202,
                )
                for i in range(n)
            ]

        return [thread(t) for t in range(threads)]

    def decision_requests(self, parked: list[list[Parked]]) -> list[list]:
        """The reviewer approves each thread's parked approvals, a client thread per run."""

        def thread(approvals):
            http = self.reviewer()
            return [
                lambda a=a: checked(
                    http.post(f"/api/v1/approvals/{a.approval_id}/decision/", json={"approved": True}), 200
                )
                for a in approvals
            ]

        return [thread(approvals) for approvals in parked]

    def resume_requests(self, approved: list[list[Parked]]) -> list[list]:
        """The agent resumes each approved call, a client thread per run."""

        def thread(approvals):
            http = self.agent()
            return [
                lambda a=a: checked(
                    http.post(f"/api/v1/runs/{a.run_id}/resume/", json={"approval_id": a.approval_id, "args": a.args}),
                    200,
                )
                for a in approvals
            ]

        return [thread(approvals) for approvals in approved]

    def cycle_ms(self, tool_call_id: str) -> float:
        """One whole HITL cycle over HTTP, in ms: the agent's call parks, the reviewer approves, the agent
        resumes, in a run of its own.

        Each cycle on new connections, opened untimed (the run's opening; a GET of the login page): a
        gunicorn worker keeps a connection for as long as it lives, so cycles sharing one pair of
        connections would all share one draw of which workers serve the agent and the reviewer.
        """
        with self.agent() as agent, self.reviewer() as reviewer:
            run_id = self.executing_run(agent)
            reviewer.get("/accounts/login/")
            started = time.perf_counter()
            parked = checked(
                agent.post(f"/api/v1/runs/{run_id}/tool-calls/", json=parking_call(tool_call_id, PRESCRIPTION)), 202
            )
            approval_id = parked.json()["approval"]["id"]
            checked(reviewer.post(f"/api/v1/approvals/{approval_id}/decision/", json={"approved": True}), 200)
            checked(
                agent.post(f"/api/v1/runs/{run_id}/resume/", json={"approval_id": approval_id, "args": PRESCRIPTION}),
                200,
            )
            return (time.perf_counter() - started) * 1000


def parked_by_run(responses) -> list[list[Parked]]:
    """The approvals a suspend phase parked, grouped by run, each run's in the order they were parked."""
    by_run: dict[str, list[Parked]] = {}
    for response in responses:
        run_id = response.request.url.path.split("/")[-3]  # /api/v1/runs/{id}/tool-calls/
        args = json.loads(response.request.content)["args"]
        by_run.setdefault(run_id, []).append(Parked(run_id, response.json()["approval"]["id"], args))
    return list(by_run.values())


def statements(responses) -> str:
    """The statements the requests sent, as their server counted them: "IN" or "IN+OUT", IN from BEGIN to
    COMMIT as the pins count, OUT outside a transaction. The most frequent count, then any other with its
    share (an agent's key is read again every few seconds, out of any transaction)."""
    counts = Counter(
        tuple(int(n) for n in r.headers[STATEMENTS_HEADER].split()) for r in responses if STATEMENTS_HEADER in r.headers
    )
    if not counts:
        return "?"

    def shown(inside, outside):
        return f"{inside}+{outside}" if outside else f"{inside}"

    (usual, _), *others = counts.most_common()
    total = sum(counts.values())
    return " ".join([shown(*usual), *(f"({shown(*count)}: {n / total:.0%})" for count, n in others)])
