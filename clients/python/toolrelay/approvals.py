"""Approvals: the host says whether a call may run (protocol version 2).

A session opened with ``on_approval=callback`` answers every ``approval_request`` the sidecar sends:
calls of its ``needs_approval=True`` tools (``kind == "client_tool"``) and calls of the runtime's own
tools (``Bash``, ``Write``...) that the session's mode does not let run at once
(``kind == "runtime_tool"``). The callback is ``callback(request)``, sync (run in a thread, so it may
block on a prompt) or ``async``, and returns:

- ``True`` or :func:`allow` (optionally ``allow(updated_input={...})``) -- the call runs;
- ``False`` or :func:`deny` (optionally ``deny("why")``: the model reads it) -- it does not.

Anything else, or an exception, denies the call (an approval that cannot be stated is no approval).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, Optional, Union


@dataclass(frozen=True)
class ApprovalDecision:
    """What an approval callback answers: ``allowed``, with ``updated_input`` (allow) or ``message`` (deny)."""

    allowed: bool
    message: Optional[str] = None
    updated_input: Optional[Dict[str, Any]] = None


def allow(updated_input: Optional[Dict[str, Any]] = None) -> ApprovalDecision:
    """The call runs (with ``updated_input`` instead of the model's input, if given)."""
    if updated_input is not None and not isinstance(updated_input, dict):
        raise TypeError("updated_input must be a dict (a JSON object)")
    return ApprovalDecision(True, updated_input=updated_input)


def deny(message: Optional[str] = None) -> ApprovalDecision:
    """The call does not run; the model reads that the user declined it (and ``message``, if given)."""
    if message is not None and not isinstance(message, str):
        raise TypeError("message must be a str")
    return ApprovalDecision(False, message=message)


class ApprovalRequest:
    """One question of the sidecar: may this call run?"""

    def __init__(self, frame: Dict[str, Any]) -> None:
        #: The sidecar's id of the approval.
        self.approval: str = frame["approval"]
        #: ``client_tool`` (a ``needs_approval`` tool of this host) or ``runtime_tool`` (Bash, Write...).
        self.kind: str = frame.get("kind", "")
        #: The tool's name.
        self.tool: str = frame.get("tool", "")
        #: The call's input as the runtime sent it.
        self.input: Any = frame.get("input")
        #: The model's id of the call (None when the runtime gave none).
        self.tool_call_id: Optional[str] = frame.get("tool_call_id")
        #: A client tool call's idempotency key (the same for every re-delivery of the call); None for a runtime tool.
        self.idempotency_key: Optional[str] = frame.get("idempotency_key")
        #: The tool's annotations as declared (``{}`` for a runtime tool).
        self.annotations: Dict[str, Any] = frame.get("annotations") or {}
        self.agent_id: str = frame.get("agent_id", "")
        self.conversation_id: str = frame.get("conversation_id", "")
        #: The running turn, if any.
        self.turn: Optional[str] = frame.get("turn")
        #: How long the sidecar waits for the answer (ms); then the call is denied.
        self.timeout_ms: int = frame.get("timeout_ms", 0)
        #: Set when the question is moot (timed out, turn aborted, session closed): close the prompt.
        self.cancelled = threading.Event()
        #: ``timeout``, ``cancelled`` or ``disconnected`` once cancelled.
        self.cancel_reason: Optional[str] = None

    def _cancel(self, reason: str) -> None:
        self.cancel_reason = reason
        self.cancelled.set()

    def __repr__(self) -> str:
        return "ApprovalRequest(kind=%r, tool=%r, input=%r)" % (self.kind, self.tool, self.input)


ApprovalCallback = Callable[[ApprovalRequest], Union[Any, Awaitable[Any]]]


async def ask(callback: ApprovalCallback, request: ApprovalRequest) -> ApprovalDecision:
    """Run the callback (a coroutine function on the loop, a plain function in a thread) and read its answer."""
    try:
        if inspect.iscoroutinefunction(callback):
            answer = await callback(request)
        else:
            answer = await asyncio.get_running_loop().run_in_executor(None, functools.partial(callback, request))
            if inspect.isawaitable(answer):
                answer = await answer
    except asyncio.CancelledError:
        raise
    except Exception as error:  # A failing callback denies: the host could not say yes.
        return ApprovalDecision(False, message="the approval callback failed: %s" % (str(error) or type(error).__name__))
    return decision_of(answer)


def decision_of(answer: Any) -> ApprovalDecision:
    """``True`` / ``False`` / an :class:`ApprovalDecision`; anything else denies."""
    if isinstance(answer, ApprovalDecision):
        return answer
    if answer is True:
        return ApprovalDecision(True)
    if answer is False:
        return ApprovalDecision(False)
    return ApprovalDecision(False, message="the approval callback answered %r, not True, False, allow() or deny()" % type(answer).__name__)


def response_body(decision: ApprovalDecision) -> Dict[str, Any]:
    """The ``allow``, ``message`` and ``updated_input`` of an ``approval_response``."""
    body: Dict[str, Any] = {"allow": decision.allowed}
    if decision.allowed and decision.updated_input is not None:
        body["updated_input"] = decision.updated_input
    if not decision.allowed and decision.message:
        body["message"] = decision.message
    return body
