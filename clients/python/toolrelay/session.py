"""A session: one agent and conversation, the host's tools, one turn at a time."""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from .approvals import ApprovalCallback, ApprovalRequest, ask, response_body
from .faults import SidecarError, SidecarGone, ToolrelayError
from .tools import Tool, ToolContext, error_text, result_body
from .turns import Turn, TurnResult

if TYPE_CHECKING:  # pragma: no cover
    from .sidecar import Sidecar

Message = Union[str, List[Dict[str, Any]]]
_turn_numbers = itertools.count(1)


class _RunningCall:
    __slots__ = ("context", "task")

    def __init__(self, context: ToolContext, task: "asyncio.Task[None]") -> None:
        self.context = context
        self.task = task


class Session:
    """An open session. Created by :meth:`Sidecar.open_session`."""

    def __init__(self, sidecar: "Sidecar", session_id: str, tools: List[Tool], on_approval: Optional[ApprovalCallback] = None) -> None:
        self.sidecar = sidecar
        self.id = session_id
        self.agent_id = ""
        self.conversation_id = ""
        #: The tool names the runtime confirmed.
        self.tool_names: List[str] = []
        #: Error frames about this session (problems the sidecar handled, such as a bad answer).
        self.errors: List[SidecarError] = []
        #: Called with each of them, if set.
        self.on_error: Optional[Callable[[SidecarError], None]] = None
        self._tools = {tool.name: tool for tool in tools}
        self._turns: Dict[str, Turn] = {}
        self._calls: Dict[str, _RunningCall] = {}
        self._on_approval = on_approval
        self._approvals: Dict[str, Tuple[ApprovalRequest, "asyncio.Task[None]"]] = {}
        self._closed: "asyncio.Future[str]" = asyncio.get_running_loop().create_future()
        self._closed.add_done_callback(lambda future: future.cancelled() or future.exception())

    @property
    def closed(self) -> bool:
        return self._closed.done()

    def send(self, message: Message, *, turn_id: Optional[str] = None) -> Turn:
        """Send a user message (a string, or text/image parts): a :class:`Turn`."""
        if self.closed:
            raise SidecarGone("session %s is closed" % self.id)
        if turn_id is not None and turn_id in self._turns:
            raise ValueError("turn %r of session %s has not ended yet: give each turn a new id" % (turn_id, self.id))
        turn = Turn(self, turn_id or "turn-%d" % next(_turn_numbers))
        self._turns[turn.id] = turn
        try:
            self.sidecar._write({"type": "send", "session": self.id, "turn": turn.id, "message": message})
        except ToolrelayError as error:
            turn._fail(error)
        return turn

    async def run(self, message: Message) -> TurnResult:
        """Send ``message`` and return the turn's result (raises its fault if not ``ok``)."""
        return await self.send(message).result()

    async def close(self) -> None:
        """Close the session: a running turn ends ``session_closed``, pending calls are cancelled."""
        if not self.closed:
            await self._send({"type": "close_session", "session": self.id})
        await asyncio.shield(self._closed)

    async def _send(self, frame: Dict[str, Any]) -> None:
        await self.sidecar._send(frame)

    # Frames from the sidecar.

    def _on_frame(self, frame: Dict[str, Any]) -> None:
        kind = frame["type"]
        if kind == "turn_event":
            turn = self._turns.get(frame.get("turn"))
            if turn is not None:
                turn._on_event(frame.get("event") or {})
        elif kind == "turn_end":
            turn = self._turns.pop(frame.get("turn"), None)
            if turn is not None:
                turn._on_end(frame)
        elif kind == "tool_call":
            self._start_call(frame)
        elif kind == "cancel":
            running = self._calls.pop(frame.get("call"), None)
            if running is not None:
                running.context._cancel(frame.get("reason", "cancelled"), frame.get("message", ""))
                running.task.cancel()
        elif kind == "approval_request":
            self._start_approval(frame)
        elif kind == "approval_cancel":
            asked = self._approvals.pop(frame.get("approval"), None)
            if asked is not None:
                asked[0]._cancel(frame.get("reason", "cancelled"))
                asked[1].cancel()
        elif kind == "session_closed":
            self._finish(frame.get("reason", "closed"))

    def _on_error(self, error: SidecarError) -> None:
        turn = self._turns.get(error.frame.get("turn"))
        if turn is not None and error.frame.get("frame_type") == "send":
            self._turns.pop(turn.id, None)
            turn._fail(error)
            return
        self.errors.append(error)
        if self.on_error is not None:
            self.on_error(error)

    def _start_call(self, frame: Dict[str, Any]) -> None:
        context = ToolContext(
            call=frame["call"],
            tool_call_id=frame.get("tool_call_id", ""),
            agent_id=frame.get("agent_id", ""),
            conversation_id=frame.get("conversation_id", ""),
            turn=frame.get("turn"),
            timeout_ms=frame.get("timeout_ms", 0),
        )
        task = asyncio.get_running_loop().create_task(self._run_call(frame, context))
        self._calls[context.call] = _RunningCall(context, task)

    async def _run_call(self, frame: Dict[str, Any], context: ToolContext) -> None:
        answer: Dict[str, Any]
        try:
            tool = self._tools.get(frame.get("tool", ""))
            if tool is None:
                raise LookupError("this host has no tool %r" % frame.get("tool"))
            value = await tool.invoke(frame.get("input"), context)
            answer = dict({"type": "tool_result"}, **result_body(value))
        except asyncio.CancelledError:
            if context.cancelled.is_set():
                return  # The sidecar stopped waiting: nothing to answer.
            raise
        except Exception as error:  # A handler's failure is the model's to read.
            answer = {"type": "tool_error", "message": error_text(error)}
        finally:
            if self._calls.get(context.call) is not None and self._calls[context.call].context is context:
                del self._calls[context.call]
        if context.cancelled.is_set():
            return
        answer.update(session=self.id, call=context.call)
        try:
            await self.sidecar._send(answer)
        except SidecarGone:
            pass

    def _start_approval(self, frame: Dict[str, Any]) -> None:
        request = ApprovalRequest(frame)
        task = asyncio.get_running_loop().create_task(self._run_approval(request))
        self._approvals[request.approval] = (request, task)

    async def _run_approval(self, request: ApprovalRequest) -> None:
        try:
            if self._on_approval is None:  # The sidecar asks only a host that said approvals: true.
                body: Dict[str, Any] = {"allow": False, "message": "this host has no approval callback"}
            else:
                body = response_body(await ask(self._on_approval, request))
        except asyncio.CancelledError:
            if request.cancelled.is_set():
                return  # The question is moot: nothing to answer.
            raise
        finally:
            asked = self._approvals.get(request.approval)
            if asked is not None and asked[0] is request:
                del self._approvals[request.approval]
        if request.cancelled.is_set():
            return
        try:
            await self.sidecar._send(dict({"type": "approval_response", "session": self.id, "approval": request.approval}, **body))
        except SidecarGone:
            pass

    def _finish(self, reason: str) -> None:
        if self.closed:
            return
        self._closed.set_result(reason)
        for turn in list(self._turns.values()):
            turn._fail(SidecarGone("session %s closed (%s) before its turn ended" % (self.id, reason)))
        self._turns.clear()
        for running in list(self._calls.values()):
            running.context._cancel("cancelled", "the session closed")
            running.task.cancel()
        self._calls.clear()
        for request, task in list(self._approvals.values()):
            request._cancel("cancelled")
            task.cancel()
        self._approvals.clear()

    def _gone(self, error: ToolrelayError) -> None:
        if self.closed:
            return
        for turn in list(self._turns.values()):
            turn._fail(error)
        self._turns.clear()
        self._finish("sidecar_gone")

