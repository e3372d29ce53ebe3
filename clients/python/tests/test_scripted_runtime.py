"""The Python host against the scripted runtime (toolrelay/testing) through the real sidecar:
Python callables as tools (sync and async), inputs exactly as sent, the handler's verdict as what
the model reads, and every way a turn ends as its typed fault. Every frame either side wrote is
checked against the protocol's published JSON Schemas."""

from __future__ import annotations

import asyncio
import time
import unittest
from typing import Any, Dict, List, Tuple

import support
from toolrelay import (
    CancelledFault,
    LinkLostFault,
    RuntimeErrorFault,
    SessionOpenError,
    ToolErrorFault,
    ToolResult,
    ToolTimeoutFault,
    TurnFault,
    TurnInProgressFault,
    error_result,
    start_sidecar,
    text,
    tool,
)

WEATHER_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}


@tool(description="Current weather for a city", input_schema=WEATHER_SCHEMA, annotations={"readOnlyHint": True})
def get_weather(arguments):
    return "sunny in %s" % arguments["city"]


class ScriptedRuntimeTests(unittest.IsolatedAsyncioTestCase):
    stack: support.Stack
    schemas: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = support.Stack("scripted-stack.ts")
        cls.schemas = support.load_schemas()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.stack.stop()

    async def asyncSetUp(self) -> None:
        self.frames: List[Tuple[str, Dict[str, Any]]] = []
        self.sidecar = await start_sidecar(support.sidecar_command())
        self.sidecar.trace = lambda direction, frame: self.frames.append((direction, frame))

    async def asyncTearDown(self) -> None:
        code = await self.sidecar.close()
        self.assertEqual(code, 0)
        for direction, frame in self.frames:
            problems = support.frame_problems(frame, "host" if direction == "out" else "sidecar", self.schemas)
            self.assertEqual(problems, [], "%s frame %s" % (direction, frame.get("type")))

    async def open(self, *tools, **options):
        return await self.sidecar.open_session(backend={"kind": "local", "url": self.stack.ready["url"]}, agent={"create": {"model": "scripted/test"}}, tools=list(tools), **options)

    def tool_returns(self, start: int) -> List[Dict[str, Any]]:
        return self.stack.since(start, "tool_return")

    async def test_a_python_function_is_the_tool_and_its_result_is_what_the_model_reads(self) -> None:
        session = await self.open(get_weather)
        self.assertEqual(session.tool_names, ["get_weather"])
        mark = self.stack.mark()
        turn = session.send('SAY Checking.\nCALL get_weather {"city": "Paris"}')
        kinds = [event.kind async for event in turn]
        result = await turn.result()
        self.assertEqual(result.fault, "ok")
        self.assertEqual(result.stop, "end_turn")
        self.assertEqual(result.text, "Checking.done: sunny in Paris")
        self.assertEqual(self.tool_returns(mark), [{"tool": "get_weather", "toolReturn": "sunny in Paris", "isError": False, "error": None}])
        for kind in ("assistant", "tool_call", "tool_result"):
            self.assertIn(kind, kinds)
        call = next(event for event in result.events if event.kind == "tool_call")
        self.assertEqual((call.tool_name, call.input, call.owner), ("get_weather", {"city": "Paris"}, "client"))

    async def test_an_extra_key_and_a_missing_field_reach_the_handler_as_sent_and_its_verdict_reaches_the_model(self) -> None:
        seen: List[Any] = []

        @tool(name="get_weather", description="Current weather for a city", input_schema=WEATHER_SCHEMA)
        def strict_weather(arguments, context):
            seen.append(arguments)
            if "city" not in arguments:
                return error_result("refused: city is required")
            unknown = sorted(set(arguments) - {"city"})
            if unknown:
                return error_result("refused: unknown keys %s" % ", ".join(unknown))
            return "sunny in %s" % arguments["city"]

        session = await self.open(strict_weather)
        mark = self.stack.mark()
        with self.assertRaises(ToolErrorFault) as raised:
            await session.send('CALL get_weather {"city": "Paris", "units": "kelvin"}\nCALL get_weather {"town": "Oslo"}').result()
        self.assertEqual(seen, [{"city": "Paris", "units": "kelvin"}, {"town": "Oslo"}])
        returns = self.tool_returns(mark)
        self.assertEqual([entry["isError"] for entry in returns], [True, True])
        self.assertIn("refused: unknown keys units", returns[0]["toolReturn"])
        self.assertIn("refused: city is required", returns[1]["toolReturn"])
        result = raised.exception.result
        self.assertEqual(result.stop, "end_turn")
        self.assertEqual([call["outcome"] for call in result.tool_calls], ["tool_error", "tool_error"])

    async def test_async_tools_and_content_blocks(self) -> None:
        @tool(description="Adds two numbers", input_schema={"type": "object"})
        async def add(arguments, context):
            await asyncio.sleep(0.01)
            return ToolResult([text("sum"), text(str(arguments["a"] + arguments["b"]))])

        session = await self.open(add)
        mark = self.stack.mark()
        result = await session.send('CALL add {"a": 2, "b": 3}')
        self.assertEqual(result.fault, "ok")
        self.assertEqual(self.tool_returns(mark)[0]["toolReturn"], "sum\n5")

    async def test_a_handler_that_raises_ends_the_turn_tool_error_and_the_model_reads_why(self) -> None:
        @tool(description="Reads the config", input_schema={"type": "object"})
        def read_config(arguments):
            raise PermissionError("config file is locked")

        session = await self.open(read_config)
        mark = self.stack.mark()
        with self.assertRaises(ToolErrorFault) as raised:
            await session.send("CALL read_config {}").result()
        self.assertIn("config file is locked", self.tool_returns(mark)[0]["toolReturn"])
        self.assertEqual(raised.exception.fault, "tool_error")
        self.assertIn("done:", raised.exception.result.text)

    async def test_a_handler_past_its_deadline_is_cancelled_and_the_turn_ends_tool_timeout(self) -> None:
        cancelled: List[str] = []

        @tool(description="Takes forever", input_schema={"type": "object"}, timeout_ms=200)
        async def slow(arguments, context):
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                cancelled.append(context.cancel_reason)
                raise
            return "never"

        session = await self.open(slow)
        mark = self.stack.mark()
        with self.assertRaises(ToolTimeoutFault) as raised:
            await session.send("CALL slow {}").result()
        self.assertEqual(cancelled, ["timeout"])
        self.assertIn("timed out after 200 ms", self.tool_returns(mark)[0]["toolReturn"])
        self.assertEqual(raised.exception.result.tool_calls[0]["outcome"], "timeout")

    async def test_a_sync_handler_sees_its_cancellation(self) -> None:
        stopped: List[Tuple[bool, str]] = []

        @tool(description="Waits in a thread", input_schema={"type": "object"}, timeout_ms=150)
        def waits(arguments, context):
            stopped.append((context.cancelled.wait(10), context.cancel_reason))
            return "ignored"

        session = await self.open(waits)
        with self.assertRaises(ToolTimeoutFault):
            await session.send("CALL waits {}").result()
        await asyncio.sleep(0)
        deadline = time.monotonic() + 5
        while not stopped and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self.assertEqual(stopped, [(True, "timeout")])

    async def test_cancel_aborts_the_running_call_and_the_turn_ends_cancelled(self) -> None:
        started = asyncio.Event()
        reasons: List[str] = []

        @tool(description="A long job", input_schema={"type": "object"})
        async def long_job(arguments, context):
            started.set()
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                reasons.append(context.cancel_reason)
                raise

        session = await self.open(long_job)
        turn = session.send("CALL long_job {}")
        await asyncio.wait_for(started.wait(), 10)
        await turn.cancel()
        with self.assertRaises(CancelledFault) as raised:
            await turn.result()
        self.assertEqual(raised.exception.result.stop, "cancelled")
        self.assertEqual(reasons, ["cancelled"])

    async def test_a_failing_model_ends_runtime_error(self) -> None:
        session = await self.open()
        with self.assertRaises(RuntimeErrorFault) as raised:
            await session.send("FAIL the model exploded").result()
        self.assertIn("the model exploded", raised.exception.result.message)
        self.assertEqual(raised.exception.result.stop, "error")

    async def test_a_lost_link_ends_link_lost_and_the_session_goes_on(self) -> None:
        session = await self.open(get_weather)
        with self.assertRaises(LinkLostFault) as raised:
            await session.send("DROP").result()
        self.assertIsNone(raised.exception.result.stop)
        result = await session.send('CALL get_weather {"city": "Rome"}').result()
        self.assertEqual(result.text, "done: sunny in Rome")

    async def test_every_fault_is_a_turn_fault_and_end_never_raises_one(self) -> None:
        session = await self.open()
        result = await session.send("FAIL nope").end()
        self.assertEqual(result.fault, "runtime_error")
        self.assertTrue(issubclass(RuntimeErrorFault, TurnFault))

    async def test_a_turn_id_still_running_is_refused_here_and_a_second_turn_ends_turn_in_progress(self) -> None:
        session = await self.open()
        running = session.send("HOLD", turn_id="first")
        with self.assertRaises(ValueError):
            session.send("SAY again", turn_id="first")
        with self.assertRaises(TurnInProgressFault):
            await session.send("SAY hi").result()
        await running.cancel()
        with self.assertRaises(CancelledFault):
            await running

    async def test_two_sessions_in_one_sidecar(self) -> None:
        def named(label):
            @tool(name="whoami", description="Says which session", input_schema={"type": "object"})
            def whoami(arguments):
                return label

            return whoami

        first = await self.open(named("first"))
        second = await self.open(named("second"))
        results = await asyncio.gather(first.send("CALL whoami {}").result(), second.send("CALL whoami {}").result())
        self.assertEqual([result.text for result in results], ["done: first", "done: second"])
        await first.close()
        self.assertTrue(first.closed)
        self.assertEqual((await second.send("CALL whoami {}").result()).text, "done: second")

    async def test_a_session_that_cannot_open_raises_its_code(self) -> None:
        bad = tool(name="no spaces", description="x", input_schema={"type": "object"})(lambda arguments: "x")
        with self.assertRaises(SessionOpenError) as raised:
            await self.open(bad)
        self.assertEqual(raised.exception.code, "invalid_tool_definition")
        with self.assertRaises(SessionOpenError) as refused:
            await self.sidecar.open_session(backend={"kind": "local", "url": "ws://127.0.0.1:1/ws"}, agent={"id": "agent-1"})
        self.assertEqual(refused.exception.code, "connect_failed")


class MessagePackTests(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = support.Stack("scripted-stack.ts")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.stack.stop()

    async def test_a_whole_turn_over_messagepack(self) -> None:
        async with start_sidecar(support.sidecar_command(), encoding="msgpack") as sidecar:
            self.assertEqual(sidecar.welcome["encoding"], "msgpack")
            session = await sidecar.open_session(backend={"kind": "local", "url": self.stack.ready["url"]}, agent={"create": {"model": "scripted/test"}}, tools=[get_weather])
            result = await session.send('CALL get_weather {"city": "Zürich"}').result()
            self.assertEqual(result.text, "done: sunny in Zürich")


if __name__ == "__main__":
    unittest.main()
