/**
 * Example frames of every type, both directions — the shared fixtures'
 * content (protocol-fixtures.test.ts writes them with their bytes). Values
 * that encodings treat differently are on purpose: non-ASCII text, control
 * characters, integers of every MessagePack width, negatives, non-integers,
 * nesting, empty arrays and objects, null.
 */
export interface ExampleFrame {
  direction: "host" | "sidecar";
  /** File name part: `<direction>-<name>.json`. */
  name: string;
  frame: Record<string, unknown> & { type: string };
}

const weatherSchema = {
  type: "object",
  properties: { city: { type: "string", description: "City name, e.g. Zürich" }, days: { type: "integer", minimum: 1, maximum: 14 } },
  required: ["city"],
  additionalProperties: false,
};

const awkwardInput = {
  city: "Zürich — 東京 🌤",
  line: 'tab\there\nnewline "quoted" \\ back\u0001',
  sizes: [
    0, 1, 127, 128, 255, 256, 65_535, 65_536, 4_294_967_295, 4_294_967_296, -1, -32, -33, -128, -129, -32_768, -32_769, -2_147_483_648,
    -2_147_483_649,
  ],
  ratio: 0.25,
  big: 12_345.678,
  nested: { deeper: { deepest: [true, false, null, {}, []] } },
  empty: "",
};

export function exampleFrames(): ExampleFrame[] {
  return [
    {
      direction: "host",
      name: "hello",
      frame: { type: "hello", versions: [1, 2], client: { name: "toolrelay-python", version: "0.1.0" } },
    },
    {
      direction: "host",
      name: "open_session-local",
      frame: {
        type: "open_session",
        session: "session-1",
        backend: { kind: "local", url: "ws://127.0.0.1:4500/ws" },
        agent: { create: { model: "llama.cpp/scripted-model", name: "weather" } },
        conversation: "new",
        tools: [
          {
            name: "get_weather",
            description: "Current weather for a city",
            input_schema: weatherSchema,
            annotations: { readOnlyHint: true, title: "Weather" },
            timeout_ms: 10_000,
          },
        ],
        options: { mode: "unrestricted", tool_timeout_ms: 30_000, client_info: { name: "my-host", version: "2.0.0" } },
      },
    },
    {
      direction: "host",
      name: "open_session-approvals",
      frame: {
        type: "open_session",
        session: "session-3",
        backend: { kind: "local", url: "ws://127.0.0.1:4500/ws" },
        agent: { id: "agent-1234" },
        tools: [
          {
            name: "delete_file",
            description: "Deletes a file of the host",
            input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
            annotations: { destructiveHint: true },
            needs_approval: true,
          },
        ],
        options: { approvals: true, approval_timeout_ms: 60_000 },
      },
    },
    {
      direction: "host",
      name: "open_session-cloud",
      frame: {
        type: "open_session",
        session: "session-2",
        backend: {
          kind: "cloud",
          api_key: "sk-let-example-not-a-key",
          environment: { name: "my-laptop" },
          base_url: "https://api.letta.com",
        },
        agent: { id: "agent-1234" },
        conversation: "default",
        tools: [],
      },
    },
    {
      direction: "host",
      name: "send-text",
      frame: { type: "send", session: "session-1", turn: "turn-1", message: "What is the weather in Zürich?" },
    },
    {
      direction: "host",
      name: "send-parts",
      frame: {
        type: "send",
        session: "session-1",
        turn: "turn-2",
        message: [
          { type: "text", text: "And this?" },
          { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
        ],
      },
    },
    { direction: "host", name: "abort", frame: { type: "abort", session: "session-1", turn: "turn-1" } },
    {
      direction: "host",
      name: "tool_result",
      frame: {
        type: "tool_result",
        session: "session-1",
        call: "call-1",
        content: [
          { type: "text", text: "sunny, 21 °C" },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
        ],
        isError: false,
      },
    },
    {
      direction: "host",
      name: "tool_result-error",
      frame: {
        type: "tool_result",
        session: "session-1",
        call: "call-2",
        content: [{ type: "text", text: "refused: city is required" }],
        isError: true,
      },
    },
    {
      direction: "host",
      name: "tool_error",
      frame: { type: "tool_error", session: "session-1", call: "call-3", message: "PermissionError: config file is locked" },
    },
    {
      direction: "host",
      name: "approval_response-allow",
      frame: { type: "approval_response", session: "session-3", approval: "approval-1", allow: true },
    },
    {
      direction: "host",
      name: "approval_response-allow-updated",
      frame: {
        type: "approval_response",
        session: "session-3",
        approval: "approval-2",
        allow: true,
        updated_input: { path: "notes.txt.bak" },
      },
    },
    {
      direction: "host",
      name: "approval_response-deny",
      frame: { type: "approval_response", session: "session-3", approval: "approval-3", allow: false, message: "Not that file." },
    },
    { direction: "host", name: "close_session", frame: { type: "close_session", session: "session-1" } },
    { direction: "host", name: "shutdown", frame: { type: "shutdown" } },
    {
      direction: "sidecar",
      name: "welcome",
      frame: {
        type: "welcome",
        version: 2,
        sidecar: { name: "toolrelay-sidecar", version: "0.1.0" },
        encoding: "json",
        max_frame_bytes: 16_777_216,
      },
    },
    {
      direction: "sidecar",
      name: "session_opened",
      frame: { type: "session_opened", session: "session-1", agent_id: "agent-5f1c", conversation_id: "conv-77aa", tools: ["get_weather"] },
    },
    {
      direction: "sidecar",
      name: "turn_event-assistant",
      frame: {
        type: "turn_event",
        session: "session-1",
        turn: "turn-1",
        event: { kind: "assistant", text: "Let me check. ", message_id: "message-1" },
      },
    },
    {
      direction: "sidecar",
      name: "turn_event-tool_call",
      frame: {
        type: "turn_event",
        session: "session-1",
        turn: "turn-1",
        event: { kind: "tool_call", tool_call_id: "call_0", tool_name: "get_weather", input: awkwardInput, owner: "client" },
      },
    },
    {
      direction: "sidecar",
      name: "turn_event-tool_result",
      frame: {
        type: "turn_event",
        session: "session-1",
        turn: "turn-1",
        event: {
          kind: "tool_result",
          tool_call_id: "call_0",
          tool_name: "get_weather",
          is_error: false,
          text: "sunny, 21 °C",
          owner: "client",
        },
      },
    },
    {
      direction: "sidecar",
      name: "turn_event-subagent",
      frame: {
        type: "turn_event",
        session: "session-1",
        turn: "turn-1",
        event: {
          kind: "subagent",
          subagent_id: "sub-1",
          event: { kind: "tool_output", tool_call_id: "call_9", tool_name: null, text: "a\nb", owner: "runtime" },
        },
      },
    },
    {
      direction: "sidecar",
      name: "tool_call",
      frame: {
        type: "tool_call",
        session: "session-1",
        call: "call-1",
        turn: "turn-1",
        tool: "get_weather",
        tool_call_id: "call_0",
        agent_id: "agent-5f1c",
        conversation_id: "conv-77aa",
        input: awkwardInput,
        timeout_ms: 10_000,
      },
    },
    {
      direction: "sidecar",
      name: "cancel",
      frame: {
        type: "cancel",
        session: "session-1",
        call: "call-1",
        reason: "timeout",
        message: "The tool call timed out after 10000 ms.",
      },
    },
    {
      direction: "sidecar",
      name: "approval_request-client_tool",
      frame: {
        type: "approval_request",
        session: "session-3",
        approval: "approval-1",
        turn: "turn-1",
        kind: "client_tool",
        tool: "delete_file",
        tool_call_id: "call_0",
        agent_id: "agent-1234",
        conversation_id: "conv-77aa",
        input: { path: "notes.txt" },
        annotations: { destructiveHint: true },
        idempotency_key: "tr1_k2Vf0l9nVxq3Qd1bq5eC1m6w8Qy0Zk3pT4s7u9x2A4c",
        timeout_ms: 60_000,
      },
    },
    {
      direction: "sidecar",
      name: "approval_request-runtime_tool",
      frame: {
        type: "approval_request",
        session: "session-3",
        approval: "approval-4",
        turn: "turn-2",
        kind: "runtime_tool",
        tool: "Bash",
        tool_call_id: "call_1",
        agent_id: "agent-1234",
        conversation_id: "conv-77aa",
        input: { command: "rm -rf build", description: "Remove the build folder" },
        annotations: {},
        idempotency_key: null,
        timeout_ms: 60_000,
      },
    },
    {
      direction: "sidecar",
      name: "approval_cancel",
      frame: {
        type: "approval_cancel",
        session: "session-3",
        approval: "approval-4",
        reason: "timeout",
        message: "the approval timed out",
      },
    },
    {
      direction: "sidecar",
      name: "turn_end-ok",
      frame: {
        type: "turn_end",
        session: "session-1",
        turn: "turn-1",
        fault: "ok",
        stop: "end_turn",
        message: null,
        text: "Let me check. It is sunny.",
        tool_calls: [{ call: "call-1", tool_call_id: "call_0", tool: "get_weather", outcome: "ok" }],
      },
    },
    {
      direction: "sidecar",
      name: "turn_end-link_lost",
      frame: {
        type: "turn_end",
        session: "session-1",
        turn: "turn-2",
        fault: "link_lost",
        stop: null,
        message: "the link to the runtime was lost during the turn",
        text: "",
        tool_calls: [],
      },
    },
    { direction: "sidecar", name: "session_closed", frame: { type: "session_closed", session: "session-1", reason: "closed" } },
    {
      direction: "sidecar",
      name: "error",
      frame: {
        type: "error",
        code: "unknown_session",
        message: "session session-9 is not open",
        frame_type: "send",
        session: "session-9",
        turn: "turn-1",
        call: null,
      },
    },
    { direction: "sidecar", name: "goodbye", frame: { type: "goodbye" } },
  ];
}
