"""The asyncio client: ``AsyncCondor`` mirrors ``Condor`` with ``await`` and ``async with``.

Only the transport differs; what is sent and how answers are read is
``protocol``'s, shared with the sync client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from condor_client import policy, protocol
from condor_client.client import DEFAULT_WAIT
from condor_client.context import current_run
from condor_client.errors import ConnectionFailed, RunEnded, error_from_answer
from condor_client.protocol import Allowed, Answer, Call, Flow, Parked, Wait
from condor_client.sse import DecisionWatcher, decision_from_approval

logger = logging.getLogger("condor_client")


class AsyncCondor:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        wait_timeout: float = DEFAULT_WAIT,
        timeout: float = 30.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ):
        self.wait_timeout = wait_timeout
        self._http = httpx.AsyncClient(**policy.client_options(base_url, api_key, timeout), transport=transport)

    async def session(
        self,
        *,
        title: str | None = None,
        patient_ref: str | None = None,
        care_unit: str | None = None,
        autonomy: str | None = None,
        consent: bool | None = None,
        age_band: str | None = None,
    ) -> AsyncSession:
        data = await self.drive(
            protocol.open_session(
                title=title,
                patient_ref=patient_ref,
                care_unit=care_unit,
                autonomy=autonomy,
                consent=consent,
                age_band=age_band,
            )
        )
        return AsyncSession(self, data)

    async def approval(self, approval_id: str) -> dict:
        return await self.drive(protocol.get_approval(approval_id))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncCondor:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    # --- the transport ----------------------------------------------------------------------

    async def drive(self, flow: Flow) -> Any:
        result = None
        try:
            while True:
                step = flow.send(result)
                result = await (self._send(step) if isinstance(step, Call) else self._wait(step))
        except StopIteration as done:
            return done.value

    async def _send(self, call: Call) -> Answer:
        attempt = 0
        while True:
            try:
                response = await self._http.request(
                    call.method, call.path, json=call.body, headers=policy.headers_for(call)
                )
            except httpx.TransportError as error:
                if not policy.retry_after_error(call, error, attempt):
                    raise ConnectionFailed(f"{call.method} {call.path}: {error!r}") from error
            else:
                if not policy.retry_after_status(call, response.status_code, attempt):
                    return Answer(response.status_code, policy.json_of(response))
            await asyncio.sleep(policy.RETRY_DELAYS[attempt])
            attempt += 1

    async def _wait(self, wait: Wait) -> dict:
        watcher, deadline, failures = (
            DecisionWatcher(wait.approval_id),
            policy.Deadline(wait.approval_id, wait.timeout),
            0,
        )
        while True:
            remaining = deadline.check()
            try:
                async with self._http.stream(
                    "GET",
                    f"runs/{wait.run_id}/stream",
                    headers=watcher.headers(),
                    timeout=policy.stream_timeout(remaining),
                ) as response:
                    if response.status_code != 200:
                        await response.aread()
                        if response.status_code not in policy.RETRY_STATUSES:
                            raise error_from_answer(response.status_code, policy.json_of(response))
                    else:
                        async for line in response.aiter_lines():
                            decision = watcher.feed(line)
                            if decision is not None:
                                return decision
                            failures = 0
                            deadline.check()
                if watcher.done:
                    return await self._decision_after_end(wait.approval_id)
            except httpx.TransportError as error:
                logger.info(
                    "stream of run %s dropped (%r); reconnecting after %s", wait.run_id, error, watcher.last_event_id
                )
            await asyncio.sleep(min(policy.reconnect_delay(failures), max(deadline.remaining(), 0)))
            failures += 1

    async def _decision_after_end(self, approval_id: str) -> dict:
        decision = decision_from_approval(await self.approval(approval_id))
        if decision is None:
            raise RunEnded(f"The run ended while approval {approval_id} was still open.")
        return decision


class AsyncSession:
    def __init__(self, condor: AsyncCondor, data: dict):
        self.condor, self.data, self.id = condor, data, str(data["id"])

    async def add_message(
        self,
        role: str,
        text: str | None = None,
        *,
        parts: list | None = None,
        run: AsyncRun | None = None,
        message_id: str | None = None,
    ) -> dict:
        return await self.condor.drive(
            protocol.append_message(
                self.id,
                role,
                protocol.message_parts(text, parts),
                run_id=run.id if run is not None else None,
                message_id=message_id,
            )
        )

    @asynccontextmanager
    async def run(
        self, *, autonomy: str | None = None, flow_key: str | None = None, engine: str | None = None
    ) -> AsyncIterator[AsyncRun]:
        data = await self.condor.drive(protocol.open_run(self.id, autonomy=autonomy, flow_key=flow_key, engine=engine))
        run = AsyncRun(self, data)
        token = current_run.set(run)
        try:
            yield run
        except BaseException as error:
            await run.close(policy.close_reason(error), policy.close_summary(error), quiet=True)
            raise
        else:
            await run.close("completed")
        finally:
            current_run.reset(token)


class AsyncRun:
    def __init__(self, session: AsyncSession, data: dict):
        self.session, self.condor, self.data, self.id = session, session.condor, data, str(data["id"])
        self._ids = protocol.Ids()

    async def gate(
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
        return await self.condor.drive(
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

    async def ask(
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
        return await self.condor.drive(
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

    async def decision(self, approval_id: str, *, timeout: float | None = None) -> dict:
        return await self.condor.drive(protocol.wait_for_decision(self.id, approval_id, self._timeout(timeout)))

    async def resume(self, approval_id: str, decision: dict) -> Allowed:
        return await self.condor.drive(protocol.resume(self.id, approval_id, decision))

    async def clarify(
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
        return await self.condor.drive(
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

    async def report(self, tool_call_id: str, output: Any, untrusted: bool = False, *, is_error: bool = False) -> dict:
        return await self.condor.drive(
            protocol.report(self.id, tool_call_id, output, untrusted=untrusted, is_error=is_error)
        )

    async def close(self, reason: str = "completed", summary: str | None = None, *, quiet: bool = False) -> dict | None:
        try:
            self.data = await self.condor.drive(protocol.close_run(self.id, reason, summary))
        except Exception:
            if not quiet:
                raise
            logger.warning("could not close run %s as %s", self.id, reason, exc_info=True)
            return None
        return self.data

    def _timeout(self, timeout: float | None) -> float:
        return self.condor.wait_timeout if timeout is None else timeout
