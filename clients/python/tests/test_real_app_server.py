"""The Python host against the REAL Letta Code app-server (the pinned @letta-ai/letta-code in
test/letta-peer, started by test/fixtures/sidecar/real-peer-stack.ts with a scripted model), through
the real sidecar. The model's requests are reported by the stack, so the test sees exactly what
the model received after each Python tool ran."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import unittest
from typing import Any, Dict, List

import support
from toolrelay import ApprovalRequest, ToolErrorFault, deny, error_result, start_sidecar, tool

WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}, "units": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
    "required": ["city"],
    "additionalProperties": False,
}
ORDER_SCHEMA = {
    "type": "object",
    "properties": {
        "order": {
            "type": "object",
            "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}},
            "required": ["sku", "quantity"],
            "additionalProperties": False,
        }
    },
    "required": ["order"],
}


class RealAppServerTests(unittest.IsolatedAsyncioTestCase):
    stack: support.Stack

    @classmethod
    def setUpClass(cls) -> None:
        cls.stack = support.Stack("real-peer-stack.ts", ready_timeout=120.0)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.stack.stop()

    async def asyncSetUp(self) -> None:
        self.sidecar = await start_sidecar(support.sidecar_command())

    async def asyncTearDown(self) -> None:
        self.assertEqual(await self.sidecar.close(), 0)

    async def open(self, *tools, **extra):
        return await self.sidecar.open_session(
            backend={"kind": "local", "url": self.stack.ready["url"]},
            agent={"create": {"model": self.stack.ready["model"], "name": "toolrelay-python"}},
            tools=list(tools),
            **extra,
        )

    def model_requests(self, start: int) -> List[Dict[str, Any]]:
        return self.stack.since(start, "model_request")

    async def test_a_python_function_runs_as_the_tool_and_the_models_next_request_carries_its_result(self) -> None:
        calls: List[Any] = []

        @tool(description="Current weather for a city", input_schema=WEATHER_SCHEMA, annotations={"readOnlyHint": True})
        def get_weather(arguments, context):
            calls.append((arguments, context.tool_call_id))
            return "sunny and 21 degrees in %s (computed in Python)" % arguments["city"]

        session = await self.open(get_weather)
        mark = self.stack.mark()
        turn = session.send('CALL get_weather {"city": "Paris"}')
        kinds = [event.kind async for event in turn]
        result = await turn.result()
        self.assertEqual(result.fault, "ok")
        self.assertEqual(result.stop, "end_turn")
        self.assertEqual([arguments for arguments, _ in calls], [{"city": "Paris"}])
        requests = self.model_requests(mark)
        # The schema the model was offered is the Python tool's, as it is.
        self.assertEqual(requests[0]["tools"]["get_weather"], WEATHER_SCHEMA)
        follow_up = next(request for request in requests if request["tool_results"])
        self.assertEqual(follow_up["tool_results"], [{"tool_call_id": calls[0][1], "text": "sunny and 21 degrees in Paris (computed in Python)"}])
        self.assertIn("done: sunny and 21 degrees in Paris (computed in Python)", result.text)
        for kind in ("tool_call", "tool_result", "assistant"):
            self.assertIn(kind, kinds)

    async def test_an_extra_key_and_a_missing_field_reach_the_python_handler_as_sent_and_its_verdict_reaches_the_model(self) -> None:
        seen: List[Any] = []

        @tool(description="Places an order", input_schema=ORDER_SCHEMA)
        def place_order(arguments):
            seen.append(arguments)
            order = arguments.get("order", {})
            problems = ["missing %s" % name for name in ("sku", "quantity") if name not in order]
            problems += ["unknown key %s" % name for name in sorted(set(order) - {"sku", "quantity"})]
            if problems:
                return error_result("verdict: refused (%s)" % ", ".join(problems))
            return "verdict: placed %d x %s" % (order["quantity"], order["sku"])

        session = await self.open(place_order)
        mark = self.stack.mark()
        extra = {"order": {"sku": "ABC-1", "quantity": 2, "gift_wrap": True}}
        missing = {"order": {"sku": "ABC-1"}}
        with self.assertRaises(ToolErrorFault) as raised:
            await session.send("CALL place_order %s\nCALL place_order %s" % (json.dumps(extra), json.dumps(missing))).result()
        # Both reached the handler exactly as the model wrote them: nothing stripped, nothing refused.
        self.assertEqual(seen, [extra, missing])
        texts = [entry["text"] for request in self.model_requests(mark) for entry in request["tool_results"]]
        self.assertEqual(len(texts), 2)
        self.assertIn("verdict: refused (unknown key gift_wrap)", texts[0])
        self.assertIn("verdict: refused (missing quantity)", texts[1])
        self.assertEqual([call["outcome"] for call in raised.exception.result.tool_calls], ["tool_error", "tool_error"])

    async def test_the_runtime_itself_refuses_a_missing_top_level_required_field_before_any_host_sees_it(self) -> None:
        # Letta Code's own check (not the sidecar's): documented in docs/sidecar.md.
        seen: List[Any] = []

        @tool(description="Current weather for a city", input_schema=WEATHER_SCHEMA)
        def get_weather(arguments):
            seen.append(arguments)
            return "sunny"

        session = await self.open(get_weather)
        mark = self.stack.mark()
        await session.send('CALL get_weather {"units": "celsius", "extra": 1}').end()
        self.assertEqual(seen, [])
        texts = [entry["text"] for request in self.model_requests(mark) for entry in request["tool_results"]]
        self.assertEqual(len(texts), 1)
        self.assertIn("missing required parameter: city", texts[0])

    async def test_a_needs_approval_tool_runs_only_when_the_python_callback_allows_it_and_denied_the_model_reads_the_declined_text(self) -> None:
        deleted: List[Any] = []
        asked: List[ApprovalRequest] = []

        @tool(description="Deletes a file", input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, needs_approval=True)
        def delete_file(arguments):
            deleted.append(arguments)
            return "deleted %s (in Python)" % arguments["path"]

        def on_approval(request: ApprovalRequest):
            asked.append(request)
            return True if request.input["path"] == "old.txt" else deny("Keep that one.")

        session = await self.open(delete_file, on_approval=on_approval)
        mark = self.stack.mark()
        allowed = await session.send('CALL delete_file {"path": "old.txt"}').result()
        self.assertEqual([call["outcome"] for call in allowed.tool_calls], ["ok"])
        self.assertEqual(deleted, [{"path": "old.txt"}])
        self.assertEqual([entry["text"] for request in self.model_requests(mark) for entry in request["tool_results"]], ["deleted old.txt (in Python)"])

        mark = self.stack.mark()
        denied = await session.send('CALL delete_file {"path": "keep.txt"}').result()
        self.assertEqual(denied.fault, "ok")
        self.assertEqual([call["outcome"] for call in denied.tool_calls], ["denied"])
        # The tool never ran; the model read that the user declined it, as the call's result.
        self.assertEqual(deleted, [{"path": "old.txt"}])
        texts = [entry["text"] for request in self.model_requests(mark) for entry in request["tool_results"]]
        self.assertEqual(texts, ["The user declined this call of tool delete_file; it was not run. The user said: Keep that one."])
        self.assertEqual([(request.kind, request.tool, request.input) for request in asked], [
            ("client_tool", "delete_file", {"path": "old.txt"}),
            ("client_tool", "delete_file", {"path": "keep.txt"}),
        ])
        self.assertEqual(len({request.idempotency_key for request in asked}), 2)

    async def test_the_runtimes_bash_asks_the_python_callback_and_runs_only_when_it_allows(self) -> None:
        scratch = tempfile.mkdtemp(prefix="toolrelay-python-approvals-")
        self.addCleanup(shutil.rmtree, scratch, True)
        asked: List[ApprovalRequest] = []

        def on_approval(request: ApprovalRequest):
            asked.append(request)
            return request.input.get("command", "").endswith("allowed.txt")

        session = await self.open(on_approval=on_approval)
        denied_target = os.path.join(scratch, "denied.txt")
        mark = self.stack.mark()
        await session.send('CALL Bash %s' % json.dumps({"command": "touch %s" % denied_target, "description": "create a file"})).result()
        self.assertFalse(os.path.exists(denied_target))
        texts = [entry["text"] for request in self.model_requests(mark) for entry in request["tool_results"]]
        self.assertEqual(len(texts), 1)
        self.assertIn("The user denied permission for Bash; it was not run.", texts[0])

        allowed_target = os.path.join(scratch, "allowed.txt")
        await session.send('CALL Bash %s' % json.dumps({"command": "touch %s" % allowed_target, "description": "create a file"})).result()
        self.assertTrue(os.path.exists(allowed_target))
        self.assertEqual([(request.kind, request.tool, request.idempotency_key) for request in asked], [("runtime_tool", "Bash", None)] * 2)


if __name__ == "__main__":
    unittest.main()
