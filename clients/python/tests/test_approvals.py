"""Approvals from Python (protocol version 2), against the scripted runtime through the real
sidecar: a ``needs_approval=True`` tool runs only when the session's ``on_approval`` callback
allows it (sync or async, ``True``/``allow()``, ``False``/``deny("why")``), a failing callback
denies, an unanswered approval is cancelled at the session's ``approval_timeout_ms``, and a
``needs_approval`` tool without a callback is refused at open. Every frame either side wrote is
checked against the protocol's published JSON Schemas."""

from __future__ import annotations

import asyncio
import threading
import unittest
from typing import Any, Dict, List, Tuple

import support
from toolrelay import ApprovalRequest, SessionOpenError, Tool, allow, deny, start_sidecar, tool

PATH_SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class DeclarationTests(unittest.TestCase):
    def test_the_declaration_says_needs_approval_only_when_set(self) -> None:
        plain = Tool("delete_file", "deletes", PATH_SCHEMA, lambda arguments: "x")
        self.assertNotIn("needs_approval", plain.definition())

        @tool(description="deletes", input_schema=PATH_SCHEMA, needs_approval=True)
        def delete_file(arguments):
            return "x"

        self.assertEqual(delete_file.definition()["needs_approval"], True)

    def test_allow_and_deny_check_their_arguments(self) -> None:
        self.assertEqual(allow().allowed, True)
        self.assertEqual(allow({"path": "b"}).updated_input, {"path": "b"})
        self.assertEqual(deny("no").message, "no")
        with self.assertRaises(TypeError):
            allow("not a dict")  # type: ignore[arg-type]
        with self.assertRaises(TypeError):
            deny(3)  # type: ignore[arg-type]


class ApprovalTests(unittest.IsolatedAsyncioTestCase):
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
        self.deleted: List[Any] = []
        self.sidecar = await start_sidecar(support.sidecar_command())
        self.sidecar.trace = lambda direction, frame: self.frames.append((direction, frame))

        @tool(description="Deletes a file", input_schema=PATH_SCHEMA, annotations={"destructiveHint": True}, needs_approval=True)
        def delete_file(arguments):
            self.deleted.append(arguments)
            return "deleted %s" % arguments["path"]

        self.delete_file = delete_file

    async def asyncTearDown(self) -> None:
        self.assertEqual(await self.sidecar.close(), 0)
        for direction, frame in self.frames:
            problems = support.frame_problems(frame, "host" if direction == "out" else "sidecar", self.schemas)
            self.assertEqual(problems, [], "%s frame %s" % (direction, frame.get("type")))

    async def open(self, on_approval, **options):
        return await self.sidecar.open_session(
            backend={"kind": "local", "url": self.stack.ready["url"]},
            agent={"create": {"model": "scripted/test"}},
            tools=[self.delete_file],
            on_approval=on_approval,
            **options,
        )

    def last_tool_return(self, start: int) -> str:
        """What the model read for the last call since ``start`` (the stack reports it on its own pipe)."""
        self.stack.wait_for(lambda line: "tool_return" in line, 10.0, start=start)
        return self.stack.since(start, "tool_return")[-1]["toolReturn"]

    async def test_a_needs_approval_tool_runs_only_when_the_sync_callback_allows_it(self) -> None:
        asked: List[ApprovalRequest] = []

        def on_approval(request: ApprovalRequest):
            asked.append(request)
            return request.input["path"] != "keep.txt"

        session = await self.open(on_approval)
        mark = self.stack.mark()
        result = await session.send('CALL delete_file {"path": "old.txt"}').result()
        self.assertEqual(result.fault, "ok")
        self.assertEqual(self.deleted, [{"path": "old.txt"}])
        self.assertEqual(self.last_tool_return(mark), "deleted old.txt")
        self.assertEqual((asked[0].kind, asked[0].tool, asked[0].annotations), ("client_tool", "delete_file", {"destructiveHint": True}))
        self.assertTrue(asked[0].idempotency_key.startswith("tr1_"))

        mark = self.stack.mark()
        denied = await session.send('CALL delete_file {"path": "keep.txt"}').result()
        self.assertEqual(denied.fault, "ok")
        self.assertEqual([call["outcome"] for call in denied.tool_calls], ["denied"])
        self.assertEqual(self.deleted, [{"path": "old.txt"}])
        self.assertEqual(self.last_tool_return(mark), "The user declined this call of tool delete_file; it was not run.")

    async def test_an_async_callback_denies_with_words_or_allows_with_another_input(self) -> None:
        async def on_approval(request: ApprovalRequest):
            await asyncio.sleep(0)
            if request.input["path"] == "keep.txt":
                return deny("Keep that one.")
            return allow(updated_input={"path": request.input["path"] + ".bak"})

        session = await self.open(on_approval)
        mark = self.stack.mark()
        await session.send('CALL delete_file {"path": "keep.txt"}').result()
        self.assertEqual(self.last_tool_return(mark), "The user declined this call of tool delete_file; it was not run. The user said: Keep that one.")
        self.assertEqual(self.deleted, [])
        await session.send('CALL delete_file {"path": "old.txt"}').result()
        self.assertEqual(self.deleted, [{"path": "old.txt.bak"}])

    async def test_a_callback_that_raises_or_answers_nonsense_denies(self) -> None:
        answers: List[Any] = [RuntimeError("the prompt crashed"), "yes please"]

        def on_approval(request: ApprovalRequest):
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer

        session = await self.open(on_approval)
        mark = self.stack.mark()
        await session.send('CALL delete_file {"path": "a.txt"}').result()
        self.assertEqual(
            self.last_tool_return(mark),
            "The user declined this call of tool delete_file; it was not run. The user said: the approval callback failed: the prompt crashed",
        )
        mark = self.stack.mark()
        await session.send('CALL delete_file {"path": "a.txt"}').result()
        self.assertIn("the approval callback answered 'str'", self.last_tool_return(mark))
        self.assertEqual(self.deleted, [])

    async def test_an_unanswered_approval_is_cancelled_at_the_sessions_timeout_and_the_model_reads_that_nobody_answered(self) -> None:
        cancelled: List[Tuple[bool, Any]] = []
        released = threading.Event()

        def on_approval(request: ApprovalRequest):
            # A prompt nobody answers: it learns that the question is moot.
            cancelled.append((request.cancelled.wait(10), request.cancel_reason))
            released.set()
            return True

        session = await self.open(on_approval, options={"approval_timeout_ms": 1000})
        mark = self.stack.mark()
        result = await session.send('CALL delete_file {"path": "a.txt"}').result()
        self.assertEqual([call["outcome"] for call in result.tool_calls], ["denied"])
        self.assertEqual(self.last_tool_return(mark), "Tool delete_file was not run: it needs the user's approval and nobody answered in time (1 s).")
        await asyncio.get_running_loop().run_in_executor(None, released.wait, 10)
        self.assertEqual(cancelled, [(True, "timeout")])
        self.assertEqual(self.deleted, [])
        # The late True was never sent: the sidecar reported no error.
        self.assertEqual(session.errors, [])
        self.assertNotIn("approval_response", [frame["type"] for direction, frame in self.frames if direction == "out"])

    async def test_a_needs_approval_tool_without_a_callback_is_refused_at_open(self) -> None:
        with self.assertRaises(SessionOpenError) as raised:
            await self.open(None)
        self.assertEqual(raised.exception.code, "invalid_options")
        self.assertIn('"approvals": true', raised.exception.message)


if __name__ == "__main__":
    unittest.main()
