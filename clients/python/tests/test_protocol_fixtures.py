"""The fixtures the TypeScript tests wrote (test/fixtures/sidecar/): every example frame's bytes
decode to its frame and the frame encodes to the same bytes, in JSON and in MessagePack; every
frame is valid against its published schema; and the frames this library builds are too."""

from __future__ import annotations

import json
import unittest

import support
from toolrelay import PROTOCOL_VERSIONS, Tool, allow, decode_body, decode_frames, deny, encode_frame
from toolrelay.approvals import response_body
from toolrelay.tools import result_body

FRAMES = support.FIXTURES / "frames"


class ProtocolFixtureTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.names = json.loads((FRAMES / "index.json").read_text("utf-8"))
        cls.schemas = support.load_schemas()

    def test_the_fixtures_cover_every_frame_type(self) -> None:
        self.assertGreater(len(self.names), 20)
        types = {name.split("-")[0]: set() for name in self.names}
        for name in self.names:
            frame = json.loads((FRAMES / ("%s.json" % name)).read_text("utf-8"))
            types[name.split("-")[0]].add(frame["type"])
        self.assertEqual(types["host"], set(self.schemas["host"]))
        self.assertEqual(types["sidecar"], set(self.schemas["sidecar"]))

    def test_every_frame_round_trips_byte_for_byte_in_both_encodings(self) -> None:
        for name in self.names:
            frame = json.loads((FRAMES / ("%s.json" % name)).read_text("utf-8"))
            for encoding in ("json", "msgpack"):
                with self.subTest(frame=name, encoding=encoding):
                    data = (FRAMES / ("%s.%s.bin" % (name, encoding))).read_bytes()
                    self.assertEqual(decode_frames(data, encoding), [frame])
                    self.assertEqual(encode_frame(frame, encoding), data)

    def test_a_stream_of_every_frame_decodes_in_order(self) -> None:
        expected = [json.loads((FRAMES / ("%s.json" % name)).read_text("utf-8")) for name in self.names]
        for encoding in ("json", "msgpack"):
            self.assertEqual(decode_frames((FRAMES / ("all.%s.bin" % encoding)).read_bytes(), encoding), expected)

    def test_every_fixture_frame_is_valid_against_its_schema(self) -> None:
        for name in self.names:
            direction = name.split("-")[0]
            frame = json.loads((FRAMES / ("%s.json" % name)).read_text("utf-8"))
            with self.subTest(frame=name):
                self.assertEqual(support.frame_problems(frame, direction, self.schemas), [])

    def test_the_schema_checker_finds_what_is_wrong(self) -> None:
        frame = json.loads((FRAMES / "host-tool_result.json").read_text("utf-8"))
        broken = dict(frame, isError="yes", extra=1)
        del broken["call"]
        problems = support.frame_problems(broken, "host", self.schemas)
        self.assertTrue(any("call: is required" in problem for problem in problems), problems)
        self.assertTrue(any("extra: is not allowed" in problem for problem in problems), problems)
        self.assertTrue(any("isError" in problem for problem in problems), problems)

    def test_the_frames_this_library_builds_are_valid(self) -> None:
        weather = Tool("get_weather", "Weather", {"type": "object"}, lambda arguments: "x", {"readOnlyHint": True}, 1000)
        built = [
            {"type": "hello", "versions": list(PROTOCOL_VERSIONS), "client": {"name": "toolrelay-python"}},
            {"type": "open_session", "session": "s", "backend": {"kind": "local", "url": "ws://127.0.0.1:1/ws"}, "agent": {"id": "a"}, "tools": [weather.definition()]},
            dict({"type": "tool_result", "session": "s", "call": "c"}, **result_body({"answer": [1, 2.5, "ü"]})),
            dict({"type": "tool_result", "session": "s", "call": "c"}, **result_body(None)),
            {"type": "open_session", "session": "s", "backend": {"kind": "local", "url": "ws://127.0.0.1:1/ws"}, "agent": {"id": "a"},
             "tools": [Tool("delete_file", "Deletes", {"type": "object"}, lambda arguments: "x", needs_approval=True).definition()], "options": {"approvals": True}},
            dict({"type": "approval_response", "session": "s", "approval": "approval-1"}, **response_body(allow())),
            dict({"type": "approval_response", "session": "s", "approval": "approval-1"}, **response_body(allow({"path": "b"}))),
            dict({"type": "approval_response", "session": "s", "approval": "approval-1"}, **response_body(deny())),
            dict({"type": "approval_response", "session": "s", "approval": "approval-1"}, **response_body(deny("no"))),
        ]
        for frame in built:
            with self.subTest(frame=frame["type"]):
                self.assertEqual(support.frame_problems(frame, "host", self.schemas), [])
                self.assertEqual(decode_body(encode_frame(frame)[4:]), frame)


if __name__ == "__main__":
    unittest.main()
