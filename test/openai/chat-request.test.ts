import { describe, expect, it } from "vitest";
import { parseChatRequest } from "../../packages/toolrelay/src/openai/chat-request.js";

const base = { model: "letta-code", messages: [{ role: "user", content: "hi" }] };

describe("parseChatRequest", () => {
  it("normalises roles, content parts and tool names; ignores fields it has no use for", () => {
    const request = parseChatRequest({
      ...base,
      temperature: 0.2,
      max_tokens: 100,
      stream: true,
      messages: [
        {
          role: "developer",
          content: [
            { type: "text", text: "be " },
            { type: "text", text: "brief" },
          ],
        },
        {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          ],
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "functions.read_file", arguments: "{}" } }],
        },
        { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "ok" }], name: "mcp__client__read_file" },
      ],
      tools: [{ type: "function", function: { name: "mcp__client__read_file", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "functions.read_file" } },
    });
    expect(request.stream).toBe(true);
    expect(request.messages).toEqual([
      { role: "system", text: "be brief" },
      {
        role: "user",
        parts: [
          { type: "text", text: "look" },
          { type: "image", url: "data:image/png;base64,AAAA" },
        ],
      },
      { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "read_file", arguments: "{}" }] },
      { role: "tool", toolCallId: "c1", text: "ok", name: "read_file" },
    ]);
    expect(request.tools).toEqual([
      { name: "read_file", declaredName: "mcp__client__read_file", description: undefined, parameters: { type: "object" } },
    ]);
    expect(request.toolChoice).toEqual({ name: "read_file" });
  });

  it.each([
    ["a body that is not an object", [1, 2], "invalid_body", /must be a JSON object/],
    ["no model", { messages: base.messages }, "invalid_request", /model/],
    ["no messages", { model: "m", messages: [] }, "invalid_request", /messages: must hold at least one message/],
    [
      "an unknown role",
      { model: "m", messages: [{ role: "function", name: "f", content: "x" }] },
      "invalid_request",
      /messages\[0\]: must have a role of/,
    ],
    [
      "a tool message without its call id",
      { model: "m", messages: [{ role: "tool", content: "x" }] },
      "invalid_request",
      /messages\[0\]\.tool_call_id/,
    ],
    [
      "a tool message with no assistant message before it",
      {
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "tool", tool_call_id: "c1", content: "x" },
        ],
      },
      "unknown_tool_call",
      /messages\[1\]: the tool message answers the call "c1", but there is no assistant message with tool_calls before it/,
    ],
    [
      "a tool message for no call of the assistant message before it",
      {
        model: "m",
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
          { role: "tool", tool_call_id: "c2", content: "x" },
        ],
      },
      "unknown_tool_call",
      /messages\[2\]: the tool message answers the call "c2", but it is not a call of the assistant message before it \(messages\[1\] has "c1"\)/,
    ],
    [
      "an audio part",
      { model: "m", messages: [{ role: "user", content: [{ type: "input_audio", input_audio: {} }] }] },
      "invalid_request",
      /"text" or "image_url" part/,
    ],
    ["the legacy functions", { ...base, functions: [] }, "unsupported_parameter", /"functions" is not supported/],
    ["n = 2", { ...base, n: 2 }, "unsupported_parameter", /"n" must be 1/],
    ["a tool without a name", { ...base, tools: [{ type: "function", function: {} }] }, "invalid_request", /tools\[0\]\.function\.name/],
    [
      "a non-function tool",
      { ...base, tools: [{ type: "custom", custom: { name: "x" } }] },
      "invalid_request",
      /tools\[0\]\.type: must be "function"/,
    ],
    [
      "two tools with one name after normalising",
      {
        ...base,
        tools: [
          { type: "function", function: { name: "functions.x" } },
          { type: "function", function: { name: "x" } },
        ],
      },
      "duplicate_tool",
      /"functions\.x" and "x" both name the tool "x"/,
    ],
    ["a bad tool_choice", { ...base, tool_choice: "always" }, "invalid_request", /tool_choice/],
    ["metadata that is not strings", { ...base, metadata: { thread_id: 7 } }, "invalid_request", /metadata\.thread_id: must be a string/],
    ["a user field too long", { ...base, user: "u".repeat(257) }, "invalid_request", /user: must be at most 256/],
  ])("refuses %s with a 400 naming it", (_name, body, code, message) => {
    expect(() => parseChatRequest(body)).toThrow(
      expect.objectContaining({ status: 400, type: "invalid_request_error", code, message: expect.stringMatching(message) }),
    );
  });
});
