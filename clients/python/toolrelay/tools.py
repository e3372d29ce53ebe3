"""Tools as Python callables. The host owns every result: a handler's return value becomes the
content blocks the model reads, and the sidecar passes them on as they are.

A handler is ``handler(input)`` or ``handler(input, context)``, sync or ``async``. ``input`` is the
call's input exactly as the runtime sent it -- never validated against ``input_schema`` (the
schema is only shown to the model): check it yourself and answer what the model should read.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import threading
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Optional, Union

ContentBlock = Dict[str, Any]


@dataclass
class ToolResult:
    """Content blocks for the model, and ``is_error=True`` for a failure it should read as one."""

    content: List[ContentBlock]
    is_error: bool = False


def text(value: str) -> ContentBlock:
    """A text block."""
    return {"type": "text", "text": value}


def image(data_base64: str, mime_type: str) -> ContentBlock:
    """An image block (base64 data, e.g. ``image/png``)."""
    return {"type": "image", "data": data_base64, "mimeType": mime_type}


def error_result(message: str) -> ToolResult:
    """A tool error the model reads: ``ToolResult([text(message)], is_error=True)``."""
    return ToolResult([text(message)], is_error=True)


class ToolContext:
    """What a handler gets besides its input."""

    def __init__(self, call: str, tool_call_id: str, agent_id: str, conversation_id: str, turn: Optional[str], timeout_ms: int) -> None:
        #: The sidecar's id of this execution.
        self.call = call
        #: The model's id of the tool call.
        self.tool_call_id = tool_call_id
        self.agent_id = agent_id
        self.conversation_id = conversation_id
        #: The id of the turn the call belongs to, if a turn runs.
        self.turn = turn
        #: The call's deadline in ms; past it the sidecar stops waiting (``cancelled`` is set).
        self.timeout_ms = timeout_ms
        #: Set when the sidecar stopped waiting: check it in long sync handlers (threads).
        self.cancelled = threading.Event()
        #: ``timeout``, ``cancelled`` or ``disconnected`` once cancelled.
        self.cancel_reason: Optional[str] = None
        self.cancel_message: Optional[str] = None

    def _cancel(self, reason: str, message: str) -> None:
        self.cancel_reason = reason
        self.cancel_message = message
        self.cancelled.set()


Handler = Callable[..., Union[Any, Awaitable[Any]]]


@dataclass
class Tool:
    """A tool the host owns: its name, description and input JSON Schema for the model, its handler.

    A name of one of the runtime's own tools (``Read``, ``Bash``, ``Write``, ...) needs
    ``overrides_runtime_tool=True``: the tool then replaces the runtime's tool of that name (the
    model is offered this one instead, and its calls come here). Without it the sidecar refuses the
    session with ``reserved_tool_name``.

    ``needs_approval=True``: every call is first put to the session's ``on_approval`` callback and
    runs only when it allows it; denied, the model reads that the user declined it. A session with
    such a tool and no ``on_approval`` is refused (``invalid_options``)."""

    name: str
    description: str
    input_schema: Dict[str, Any]
    handler: Handler
    annotations: Optional[Dict[str, Any]] = None
    timeout_ms: Optional[int] = None
    overrides_runtime_tool: bool = False
    needs_approval: bool = False
    _wants_context: bool = field(init=False, repr=False, default=True)

    def __post_init__(self) -> None:
        if not callable(self.handler):
            raise TypeError("tool %r: handler must be callable" % self.name)
        self._wants_context = _accepts_two_arguments(self.handler)

    def definition(self) -> Dict[str, Any]:
        """The tool as ``open_session`` lists it."""
        entry: Dict[str, Any] = {"name": self.name, "description": self.description, "input_schema": self.input_schema}
        if self.annotations is not None:
            entry["annotations"] = self.annotations
        if self.timeout_ms is not None:
            entry["timeout_ms"] = self.timeout_ms
        if self.overrides_runtime_tool:
            entry["overrides_runtime_tool"] = True
        if self.needs_approval:
            entry["needs_approval"] = True
        return entry

    async def invoke(self, value: Any, context: ToolContext) -> Any:
        """Run the handler: a coroutine function on the loop, a plain function in a thread."""
        arguments = (value, context) if self._wants_context else (value,)
        if inspect.iscoroutinefunction(self.handler):
            return await self.handler(*arguments)
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(None, functools.partial(self.handler, *arguments))
        if inspect.isawaitable(outcome):
            return await outcome
        return outcome


def tool(
    name: Optional[str] = None,
    *,
    description: str,
    input_schema: Dict[str, Any],
    annotations: Optional[Dict[str, Any]] = None,
    timeout_ms: Optional[int] = None,
    overrides_runtime_tool: bool = False,
    needs_approval: bool = False,
) -> Callable[[Handler], Tool]:
    """Decorator: ``@tool(description=..., input_schema=...)`` turns a function into a :class:`Tool`
    (named after the function unless ``name`` is given). ``overrides_runtime_tool=True`` lets it take
    the name of one of the runtime's own tools (``Read``, ``Bash``, ...) and replace that tool;
    ``needs_approval=True`` makes each call ask the session's ``on_approval`` first."""

    def wrap(handler: Handler) -> Tool:
        return Tool(name or handler.__name__, description, input_schema, handler, annotations, timeout_ms, overrides_runtime_tool, needs_approval)

    return wrap


class ToolResultError(ValueError):
    """A handler returned something that cannot be sent as content."""


def result_body(value: Any) -> Dict[str, Any]:
    """The ``content`` and ``isError`` of a ``tool_result`` for what a handler returned.

    - a :class:`ToolResult` -- its blocks and ``is_error``;
    - a ``str`` -- one text block; ``None`` -- no blocks (the model reads "(no output)");
    - a list of ``{"type": "text"|"image", ...}`` blocks -- as they are;
    - an MCP CallToolResult dict (``{"content": [...], "isError": bool}``) -- as it is;
    - any other JSON value -- its JSON text, indented.
    """
    if isinstance(value, ToolResult):
        return {"content": list(value.content), "isError": bool(value.is_error)}
    if isinstance(value, str):
        return {"content": [text(value)], "isError": False}
    if value is None:
        return {"content": [], "isError": False}
    if isinstance(value, list) and value and all(isinstance(item, dict) and item.get("type") in ("text", "image") for item in value):
        return {"content": value, "isError": False}
    if isinstance(value, dict) and "content" in value and set(value) <= {"content", "isError"} and isinstance(value["content"], list):
        return {"content": value["content"], "isError": bool(value.get("isError", False))}
    try:
        return {"content": [text(json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False))], "isError": False}
    except (TypeError, ValueError) as error:
        raise ToolResultError("the result could not be converted to JSON: %s" % error) from error


def error_text(error: BaseException) -> str:
    """The message of a raised exception, never empty."""
    message = str(error)
    return message if message else type(error).__name__


def _accepts_two_arguments(handler: Handler) -> bool:
    try:
        parameters = list(inspect.signature(handler).parameters.values())
    except (TypeError, ValueError):
        return True
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)
