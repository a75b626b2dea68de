"""The synchronous client: ``Condor`` → ``Session`` → ``Run`` (a context manager) → ``gate``."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from condor_client import policy, protocol
from condor_client.context import current_run
from condor_client.errors import ConnectionFailed, RunEnded, error_from_answer
from condor_client.protocol import Allowed, Answer, Call, Flow, Parked, Wait
from condor_client.sse import DecisionWatcher, decision_from_approval

logger = logging.getLogger("condor_client")

# How long a gate waits for a reviewer by default: the server's default approval lifetime.
DEFAULT_WAIT = 900.0


class Condor:
    """A connection to Condor's agent API with one API key.

    ``wait_timeout`` is how long ``gate`` and ``clarify`` wait for a reviewer
    unless told otherwise; ``timeout`` bounds each plain request. ``transport``
    is handed to httpx (tests use it to drop connections).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        wait_timeout: float = DEFAULT_WAIT,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ):
        self.wait_timeout = wait_timeout
        self._http = httpx.Client(**policy.client_options(base_url, api_key, timeout), transport=transport)

    def session(
        self,
        *,
        title: str | None = None,
        patient_ref: str | None = None,
        care_unit: str | None = None,
        autonomy: str | None = None,
        consent: bool | None = None,
        age_band: str | None = None,
    ) -> Session:
        """Open a session (a conversation about one patient); unset fields keep the server's defaults."""
        data = self.drive(
            protocol.open_session(
                title=title,
                patient_ref=patient_ref,
                care_unit=care_unit,
                autonomy=autonomy,
                consent=consent,
                age_band=age_band,
            )
        )
        return Session(self, data)

    def approval(self, approval_id: str) -> dict:
        return self.drive(protocol.get_approval(approval_id))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Condor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- the transport: runs the protocol's steps over httpx ---------------------------------

    def drive(self, flow: Flow) -> Any:
        result = None
        try:
            while True:
                step = flow.send(result)
                result = self._send(step) if isinstance(step, Call) else self._wait(step)
        except StopIteration as done:
            return done.value

    def _send(self, call: Call) -> Answer:
        attempt = 0
        while True:
            try:
                response = self._http.request(call.method, call.path, json=call.body, headers=policy.headers_for(call))
            except httpx.TransportError as error:
                if not policy.retry_after_error(call, error, attempt):
                    raise ConnectionFailed(f"{call.method} {call.path}: {error!r}") from error
            else:
                if not policy.retry_after_status(call, response.status_code, attempt):
                    return Answer(response.status_code, policy.json_of(response))
            time.sleep(policy.RETRY_DELAYS[attempt])
            attempt += 1

    def _wait(self, wait: Wait) -> dict:
        """Read the run's stream until `wait.approval_id` is decided, reconnecting where it broke off."""
        watcher, deadline, failures = (
            DecisionWatcher(wait.approval_id),
            policy.Deadline(wait.approval_id, wait.timeout),
            0,
        )
        while True:
            remaining = deadline.check()
            try:
                with self._http.stream(
                    "GET",
                    f"runs/{wait.run_id}/stream",
                    headers=watcher.headers(),
                    timeout=policy.stream_timeout(remaining),
                ) as response:
                    if response.status_code != 200:
                        response.read()
                        if response.status_code not in policy.RETRY_STATUSES:
                            raise error_from_answer(response.status_code, policy.json_of(response))
                    else:
                        for line in response.iter_lines():
                            decision = watcher.feed(line)
                            if decision is not None:
                                return decision
                            failures = 0
                            deadline.check()
                if watcher.done:
                    return self._decision_after_end(wait.approval_id)
            except httpx.TransportError as error:
                logger.info(
                    "stream of run %s dropped (%r); reconnecting after %s", wait.run_id, error, watcher.last_event_id
                )
            time.sleep(min(policy.reconnect_delay(failures), max(deadline.remaining(), 0)))
            failures += 1

    def _decision_after_end(self, approval_id: str) -> dict:
        # The run ended without a decision chunk for this approval: the row says what became of it.
        decision = decision_from_approval(self.approval(approval_id))
        if decision is None:
            raise RunEnded(f"The run ended while approval {approval_id} was still open.")
        return decision


class Session:
    def __init__(self, condor: Condor, data: dict):
        self.condor, self.data, self.id = condor, data, str(data["id"])

    def add_message(
        self,
        role: str,
        text: str | None = None,
        *,
        parts: list | None = None,
        run: Run | None = None,
        message_id: str | None = None,
    ) -> dict:
        """Store a message of the conversation (``user`` or ``assistant``): ``text``, or AI SDK ``parts``.

        A card shows the turn that led to its call: the last user message, and the agent's
        text before the call (its assistant message, linked to ``run``).
        """
        return self.condor.drive(
            protocol.append_message(
                self.id,
                role,
                protocol.message_parts(text, parts),
                run_id=run.id if run is not None else None,
                message_id=message_id,
            )
        )

    @contextmanager
    def run(
        self, *, autonomy: str | None = None, flow_key: str | None = None, engine: str | None = None
    ) -> Iterator[Run]:
        """Open a run and set it executing; close it ``completed``, or ``error`` / ``timeout`` on an exception."""
        data = self.condor.drive(protocol.open_run(self.id, autonomy=autonomy, flow_key=flow_key, engine=engine))
        run = Run(self, data)
        token = current_run.set(run)
        try:
            yield run
        except BaseException as error:
            run.close(policy.close_reason(error), policy.close_summary(error), quiet=True)
            raise
        else:
            run.close("completed")
        finally:
            current_run.reset(token)


class Run:
    def __init__(self, session: Session, data: dict):
        self.session, self.condor, self.data, self.id = session, session.condor, data, str(data["id"])
        self._ids = protocol.Ids()

    def gate(
        self,
        tool: str,
        args: dict,
        op: str | None = None,
        rationale: str | None = None,
        *,
        timeout: float | None = None,
        tool_call_id: str | None = None,
        step_id: str | None = None,
        metadata: dict | None = None,
    ) -> Allowed:
        """Ask before running ``tool``: returns the args to run (a reviewer's edit, after one).

        ``rationale``: why the agent wants the call, for the clinician (the card shows it;
        at most 2000 characters; sent as ``metadata.rationale``). Raises ``Blocked`` (never
        run it), ``Denied`` (a reviewer said no; the reason says why), ``Expired``,
        ``Withdrawn`` (the run ended meanwhile) or ``TimedOut`` (no decision within ``timeout`` s).
        """
        return self.condor.drive(
            protocol.gate(
                self.id,
                self._ids,
                tool,
                args,
                op=op,
                timeout=self._timeout(timeout),
                tool_call_id=tool_call_id,
                step_id=step_id,
                metadata=metadata,
                rationale=rationale,
            )
        )

    def ask(
        self,
        tool: str,
        args: dict,
        op: str | None = None,
        rationale: str | None = None,
        *,
        tool_call_id: str | None = None,
        step_id: str | None = None,
        metadata: dict | None = None,
    ) -> Allowed | Parked:
        """The gate's verdict without waiting: Allowed args, ``Blocked``, or ``Parked`` (a reviewer must decide).

        For a framework that suspends the agent itself; ``gate`` is ``ask``, ``decision`` and ``resume``.
        """
        return self.condor.drive(
            protocol.ask(
                self.id,
                self._ids,
                tool,
                args,
                op=op,
                tool_call_id=tool_call_id,
                step_id=step_id,
                metadata=metadata,
                rationale=rationale,
            )
        )

    def decision(self, approval_id: str, *, timeout: float | None = None) -> dict:
        """Wait on the run's stream for a reviewer's decision on ``approval_id`` (``TimedOut`` after ``timeout``)."""
        return self.condor.drive(protocol.wait_for_decision(self.id, approval_id, self._timeout(timeout)))

    def resume(self, approval_id: str, decision: dict) -> Allowed:
        """Resume after ``decision``: the approved args (a reviewer's edit, after one), or ``Denied`` / ``Expired`` /
        ``Withdrawn``."""
        return self.condor.drive(protocol.resume(self.id, approval_id, decision))

    def clarify(
        self,
        tool: str,
        message: str,
        missing: list,
        *,
        args: dict | None = None,
        op: str | None = None,
        timeout: float | None = None,
        tool_call_id: str | None = None,
        step_id: str | None = None,
    ) -> dict:
        """Ask a reviewer for the ``missing`` fields (names, or ``{name, type?, hint?}``); returns their values."""
        return self.condor.drive(
            protocol.clarify(
                self.id,
                self._ids,
                tool,
                message,
                missing,
                args=args,
                op=op,
                timeout=self._timeout(timeout),
                tool_call_id=tool_call_id,
                step_id=step_id,
            )
        )

    def report(self, tool_call_id: str, output: Any, untrusted: bool = False, *, is_error: bool = False) -> dict:
        """Report what an allowed call returned; ``untrusted=True`` taints the session for good."""
        return self.condor.drive(protocol.report(self.id, tool_call_id, output, untrusted=untrusted, is_error=is_error))

    def close(self, reason: str = "completed", summary: str | None = None, *, quiet: bool = False) -> dict | None:
        try:
            self.data = self.condor.drive(protocol.close_run(self.id, reason, summary))
        except Exception:
            if not quiet:
                raise
            # Closing after a failure must not hide the failure; the idle sweep ends the run anyway.
            logger.warning("could not close run %s as %s", self.id, reason, exc_info=True)
            return None
        return self.data

    def _timeout(self, timeout: float | None) -> float:
        return self.condor.wait_timeout if timeout is None else timeout
