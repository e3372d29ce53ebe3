"""toolrelay for Python hosts: run a Letta Code agent's client tools as Python callables.

The library starts ``toolrelay-sidecar`` (the toolrelay npm package) as a child process and
speaks its stdio frame protocol (docs/sidecar.md of the toolrelay repository). Standard library
only; Python >= 3.9.

    async with start_sidecar() as sidecar:
        session = await sidecar.open_session(backend=..., agent=..., tools=[get_weather])
        result = await session.send("What is the weather in Paris?").result()
"""

from .approvals import ApprovalDecision, ApprovalRequest, allow, deny
from .faults import (
    FAULT_CLASSES,
    CancelledFault,
    IncompleteFault,
    InputRefusedFault,
    InputUnconfirmedFault,
    InternalFault,
    LinkLostFault,
    RuntimeErrorFault,
    SessionClosedFault,
    SessionOpenError,
    SidecarError,
    SidecarGone,
    ToolErrorFault,
    ToolrelayError,
    ToolTimeoutFault,
    TurnFault,
    TurnInProgressFault,
)
from .frames import PROTOCOL_VERSION, PROTOCOL_VERSIONS, decode_body, decode_frames, encode_body, encode_frame
from .session import Session
from .sidecar import Sidecar, default_command, minimal_environment, start_sidecar
from .tools import Tool, ToolContext, ToolResult, error_result, image, text, tool
from .turns import Turn, TurnEvent, TurnResult

__version__ = "0.1.0"

__all__ = [
    "FAULT_CLASSES",
    "PROTOCOL_VERSION",
    "PROTOCOL_VERSIONS",
    "ApprovalDecision",
    "ApprovalRequest",
    "CancelledFault",
    "IncompleteFault",
    "InputRefusedFault",
    "InputUnconfirmedFault",
    "InternalFault",
    "LinkLostFault",
    "RuntimeErrorFault",
    "Session",
    "SessionClosedFault",
    "SessionOpenError",
    "Sidecar",
    "SidecarError",
    "SidecarGone",
    "Tool",
    "ToolContext",
    "ToolErrorFault",
    "ToolResult",
    "ToolTimeoutFault",
    "ToolrelayError",
    "Turn",
    "TurnEvent",
    "TurnFault",
    "TurnInProgressFault",
    "TurnResult",
    "allow",
    "decode_body",
    "deny",
    "decode_frames",
    "default_command",
    "encode_body",
    "encode_frame",
    "error_result",
    "image",
    "minimal_environment",
    "start_sidecar",
    "text",
    "tool",
]
