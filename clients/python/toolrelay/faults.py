"""Everything this library raises. A turn's end is one named fault (the sidecar's fault table,
docs/sidecar.md "Faults"): ``ok`` is a result, every other fault is raised as its own
subclass of :class:`TurnFault`, carrying the turn's :class:`~toolrelay.TurnResult`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Type

if TYPE_CHECKING:  # pragma: no cover
    from .turns import TurnResult


class ToolrelayError(Exception):
    """The base of every error of this library."""


class SidecarGone(ToolrelayError):
    """The sidecar process ended (or its pipes broke) while something waited on it."""


class SidecarError(ToolrelayError):
    """An ``error`` frame of the sidecar: ``code`` names it (``invalid_frame``, ``unknown_session``,
    and for ``open_session`` the SDK's code in lower case: ``connect_failed``, ``invalid_options``...)."""

    def __init__(self, code: str, message: str, frame: Optional[dict] = None) -> None:
        super().__init__("%s: %s" % (code, message))
        self.code = code
        self.message = message
        self.frame = frame or {}


class SessionOpenError(SidecarError):
    """``open_session`` was answered with an error: the session did not open."""


class TurnFault(ToolrelayError):
    """A turn ended with a fault other than ``ok``. ``fault`` is its name, ``result`` the turn."""

    fault = "unknown"

    def __init__(self, result: "TurnResult") -> None:
        super().__init__("%s: %s" % (result.fault, result.message or "no message"))
        self.result = result
        self.fault = result.fault


class TurnInProgressFault(TurnFault):
    """Another turn of the session was still running: nothing was sent."""


class SessionClosedFault(TurnFault):
    """The session was closed while the turn ran."""


class LinkLostFault(TurnFault):
    """The link to the runtime was lost during the turn (or a call was abandoned to it). Retry."""


class InputUnconfirmedFault(TurnFault):
    """The message was written but never confirmed: look at the conversation before sending it again."""


class InputRefusedFault(TurnFault):
    """The runtime refused the message."""


class InternalFault(TurnFault):
    """A bug in the sidecar or the SDK; the message says what happened."""


class CancelledFault(TurnFault):
    """The turn was aborted (by this host, or by the runtime)."""


class RuntimeErrorFault(TurnFault):
    """The runtime (the model) ended the turn with an error."""


class ToolTimeoutFault(TurnFault):
    """A tool call passed its deadline; its effects are unknown (it got ``cancel``, reason timeout)."""


class ToolErrorFault(TurnFault):
    """A tool call ended as an error the model read (a handler that raised, an error result, an
    unknown tool...). The turn itself ran to its end: ``result.text`` has the model's answer."""


class IncompleteFault(TurnFault):
    """The runtime stopped the turn early (max steps, approval needed, ...): ``result.stop`` says why."""


#: The exception of every fault name but ``ok``.
FAULT_CLASSES: Dict[str, Type[TurnFault]] = {
    "turn_in_progress": TurnInProgressFault,
    "session_closed": SessionClosedFault,
    "link_lost": LinkLostFault,
    "input_unconfirmed": InputUnconfirmedFault,
    "input_refused": InputRefusedFault,
    "internal": InternalFault,
    "cancelled": CancelledFault,
    "runtime_error": RuntimeErrorFault,
    "tool_timeout": ToolTimeoutFault,
    "tool_error": ToolErrorFault,
    "incomplete": IncompleteFault,
}

for _name, _cls in FAULT_CLASSES.items():
    _cls.fault = _name


def fault_for(result: "TurnResult") -> TurnFault:
    """The exception for ``result`` (a fault this library does not know yet: a plain TurnFault)."""
    return FAULT_CLASSES.get(result.fault, TurnFault)(result)
