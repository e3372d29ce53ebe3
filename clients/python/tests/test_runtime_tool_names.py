"""A Python tool named like one of the runtime's own tools (``Read``, ``Bash``, ...): the sidecar
refuses the session with ``reserved_tool_name`` (naming ``overrides_runtime_tool``) unless the tool
says ``overrides_runtime_tool=True``; then it replaces the runtime's tool and its calls run here.
Against the scripted runtime through the real sidecar; every frame checked against the schemas."""

from __future__ import annotations

import unittest
from typing import Any, Dict, List, Tuple

import support
from toolrelay import SessionOpenError, Tool, start_sidecar, tool

READ_SCHEMA = {"type": "object", "properties": {"file_path": {"type": "string"}}, "required": ["file_path"]}


class DeclarationTests(unittest.TestCase):
    def test_the_declaration_says_overrides_runtime_tool_only_when_set(self) -> None:
        plain = Tool("Read", "reads", READ_SCHEMA, lambda arguments: "x")
        self.assertNotIn("overrides_runtime_tool", plain.definition())

        @tool(name="Read", description="reads", input_schema=READ_SCHEMA, overrides_runtime_tool=True)
        def read(arguments):
            return "x"

        self.assertEqual(read.definition()["overrides_runtime_tool"], True)


class RuntimeToolNameTests(unittest.IsolatedAsyncioTestCase):
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
        self.assertEqual(await self.sidecar.close(), 0)
        for direction, frame in self.frames:
            problems = support.frame_problems(frame, "host" if direction == "out" else "sidecar", self.schemas)
            self.assertEqual(problems, [], "%s frame %s" % (direction, frame.get("type")))

    async def open(self, *tools):
        return await self.sidecar.open_session(backend={"kind": "local", "url": self.stack.ready["url"]}, agent={"create": {"model": "scripted/test"}}, tools=list(tools))

    async def test_without_the_flag_the_session_is_refused_naming_the_field(self) -> None:
        @tool(name="Read", description="reads", input_schema=READ_SCHEMA)
        def read(arguments):
            return "x"

        with self.assertRaises(SessionOpenError) as raised:
            await self.open(read)
        self.assertEqual(raised.exception.code, "reserved_tool_name")
        self.assertIn('"overrides_runtime_tool": true', raised.exception.message)

    async def test_with_the_flag_the_python_read_replaces_the_runtimes_and_runs_here(self) -> None:
        seen: List[Any] = []

        @tool(name="Read", description="PY-READ: reads from the host's store", input_schema=READ_SCHEMA, overrides_runtime_tool=True)
        def read(arguments):
            seen.append(arguments)
            return "from the python store"

        session = await self.open(read)
        self.assertEqual(session.tool_names, ["Read"])
        mark = self.stack.mark()
        result = await session.send('CALL Read {"file_path": "notes.txt"}').result()
        self.assertEqual(result.fault, "ok")
        self.assertEqual(result.text, "done: from the python store")
        self.assertEqual(seen, [{"file_path": "notes.txt"}])
        self.assertEqual(self.stack.since(mark, "tool_return"), [{"tool": "Read", "toolReturn": "from the python store", "isError": False, "error": None}])


if __name__ == "__main__":
    unittest.main()
