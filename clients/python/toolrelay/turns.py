"""A turn: the events the runtime streams, then its end -- one named fault."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, List, Optional

from .faults import ToolrelayError, fault_for

if TYPE_CHECKING:  # pragma: no cover
    from .session import Session


class TurnEvent:
    """One event of a turn: ``kind`` (``assistant``, ``reasoning``, ``tool_call``, ``tool_output``,
    ``tool_result``, ``error``, ``subagent``) and its fields as attributes (``text``,
    ``tool_call_id``, ``tool_name``, ``input``, ``is_error``, ``owner``, ...; a subagent event has
    ``subagent_id`` and ``event``, itself a TurnEvent)."""

    __slots__ = ("kind", "data")

    def __init__(self, data: Dict[str, Any]) -> None:
        self.kind: str = data.get("kind", "")
        if self.kind == "subagent" and isinstance(data.get("event"), dict):
            data = dict(data, event=TurnEvent(data["event"]))
        self.data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return self.data[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self) -> str:
        return "TurnEvent(%r)" % (self.data,)


@dataclass
class TurnResult:
    """How a turn ended. ``fault`` is ``ok`` or one name of the fault table."""

    fault: str
    #: The runtime's stop reason (``end_turn``, ``cancelled``, ``error``...); None when it never ended the turn.
    stop: Optional[str]
    #: Why, for every fault but ``ok``.
    message: Optional[str]
    #: All assistant text of the turn.
    text: str
    #: Every client tool call of the turn: ``{"call", "tool_call_id", "tool", "outcome"}``.
    tool_calls: List[Dict[str, Any]]
    #: Every event of the turn, in order.
    events: List[TurnEvent] = field(default_factory=list)


_END = object()


class Turn:
    """A running turn. Iterate it for events (``async for event in turn``), then ``await
    turn.result()`` -- or ``await turn`` -- for its :class:`TurnResult`; a fault other than ``ok``
    raises its :class:`~toolrelay.TurnFault`. ``await turn.end()`` returns the result whatever the
    fault. Both work together."""

    def __init__(self, session: "Session", turn_id: str) -> None:
        self.session = session
        self.id = turn_id
        self._events: List[TurnEvent] = []
        self._queue: "asyncio.Queue[Any]" = asyncio.Queue()
        self._end: "asyncio.Future[TurnResult]" = asyncio.get_running_loop().create_future()
        # A caller who only iterates must not see "exception was never retrieved".
        self._end.add_done_callback(lambda future: future.cancelled() or future.exception())

    @property
    def done(self) -> bool:
        return self._end.done()

    def __aiter__(self) -> AsyncIterator[TurnEvent]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[TurnEvent]:
        while True:
            item = await self._queue.get()
            if item is _END:
                self._queue.put_nowait(_END)
                if self._end.exception() is not None:
                    raise self._end.exception()  # type: ignore[misc]
                return
            yield item

    async def end(self) -> TurnResult:
        """The turn's result, whatever its fault (raises only if the sidecar failed: SidecarGone, SidecarError)."""
        return await asyncio.shield(self._end)

    async def result(self) -> TurnResult:
        """The turn's result when its fault is ``ok``; else raises the fault's exception."""
        result = await self.end()
        if result.fault != "ok":
            raise fault_for(result)
        return result

    def __await__(self):  # type: ignore[no-untyped-def]
        return self.result().__await__()

    async def cancel(self) -> None:
        """Abort the turn: its pending tool calls are cancelled, its fault becomes ``cancelled``."""
        if not self.done:
            await self.session._send({"type": "abort", "session": self.session.id, "turn": self.id})

    def _on_event(self, data: Dict[str, Any]) -> None:
        if self.done:
            return
        event = TurnEvent(data)
        self._events.append(event)
        self._queue.put_nowait(event)

    def _on_end(self, frame: Dict[str, Any]) -> None:
        if self.done:
            return
        result = TurnResult(
            fault=frame.get("fault", "internal"),
            stop=frame.get("stop"),
            message=frame.get("message"),
            text=frame.get("text", ""),
            tool_calls=list(frame.get("tool_calls", [])),
            events=list(self._events),
        )
        self._end.set_result(result)
        self._queue.put_nowait(_END)

    def _fail(self, error: ToolrelayError) -> None:
        if self.done:
            return
        self._end.set_exception(error)
        self._queue.put_nowait(_END)
