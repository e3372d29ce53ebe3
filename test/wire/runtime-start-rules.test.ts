/**
 * docs/protocol.md#runtime_start / docs/protocol.md#silent-drops: a `runtime_start` the runtime would drop (or answer
 * with an error) is refused by encodeFrame, naming the failing path.
 */
import { describe, it } from "vitest";
import { expectAccepted, expectRejected } from "./reject.js";
import { fixture } from "./load-fixtures.js";

// biome-ignore lint/suspicious/noExplicitAny: a test reads a decoded frame's nested fields without declaring every shape
type Frame = Record<string, any>;
const createAgent = (): Frame => fixture("wire/outbound", "runtime-start-create-agent");
const existingAgent = (): Frame => fixture("wire/outbound", "runtime-start-existing-agent");
const firstTool = (frame: Frame): Frame => frame.external_tools[0].tools[0];

describe("runtime_start: agent and conversation", () => {
  it("accepts agent_id alone, and create_agent with create_conversation", () => {
    expectAccepted(fixture("wire/outbound", "runtime-start-no-tools"));
    expectAccepted(createAgent());
  });

  it("rejects agent_id combined with create_agent", () => {
    const frame = createAgent();
    frame.agent_id = "agent-1";
    expectRejected(frame, "runtime_start: create_agent: needs exactly one of agent_id or create_agent");
  });

  it("rejects a frame with neither agent_id nor create_agent", () => {
    const frame = existingAgent();
    delete frame.agent_id;
    expectRejected(frame, "needs exactly one of agent_id or create_agent");
  });

  it("rejects an empty agent_id", () => {
    const frame = existingAgent();
    frame.agent_id = "";
    expectRejected(frame, "agent_id: Too small");
  });

  it("rejects conversation_id combined with create_conversation", () => {
    const frame = existingAgent();
    frame.create_conversation = {};
    expectRejected(frame, "create_conversation: conversation_id cannot be combined with create_conversation");
  });

  it("rejects an empty conversation_id", () => {
    const frame = existingAgent();
    frame.conversation_id = "";
    expectRejected(frame, "conversation_id: Too small");
  });

  it("rejects create_agent without a body object", () => {
    const frame = createAgent();
    frame.create_agent = { pin_global: true };
    expectRejected(frame, "create_agent.body");
  });

  it("rejects create_conversation whose body is not an object", () => {
    const frame = createAgent();
    frame.create_conversation = { body: [] };
    expectRejected(frame, "create_conversation.body");
  });

  it("rejects a missing or empty request_id", () => {
    const frame = existingAgent();
    delete frame.request_id;
    expectRejected(frame, "request_id");
    frame.request_id = "";
    expectRejected(frame, "request_id");
  });
});

describe("runtime_start: external tool definitions (a bad one drops the whole frame)", () => {
  it("rejects a tool whose name is not a string", () => {
    const frame = createAgent();
    firstTool(frame).name = 42;
    expectRejected(frame, "external_tools[0].tools[0].name");
  });

  it("rejects a tool whose description is missing or not a string", () => {
    const frame = createAgent();
    delete firstTool(frame).description;
    expectRejected(frame, "external_tools[0].tools[0].description");
    firstTool(frame).description = { text: "x" };
    expectRejected(frame, "external_tools[0].tools[0].description");
  });

  it.each([
    ["an array", []],
    ["null", null],
    ["a string", '{"type":"object"}'],
    ["a Date", new Date(0)],
  ])("rejects parameters that is %s", (_label, parameters) => {
    const frame = createAgent();
    firstTool(frame).parameters = parameters;
    expectRejected(frame, "external_tools[0].tools[0].parameters");
  });

  it('accepts parameters and an agent body with an own "constructor" key', () => {
    const frame = createAgent();
    firstTool(frame).parameters = { type: "object", constructor: "x" };
    frame.create_agent.body.constructor = "y";
    expectAccepted(frame);
  });

  it("rejects a tool without parameters", () => {
    const frame = createAgent();
    delete firstTool(frame).parameters;
    expectRejected(frame, "external_tools[0].tools[0].parameters");
  });

  it("rejects a label that is not a string", () => {
    const frame = existingAgent();
    firstTool(frame).label = 7;
    expectRejected(frame, "external_tools[0].tools[0].label");
  });

  it("rejects a scope_id that is not a string", () => {
    const frame = existingAgent();
    frame.external_tools[0].scope_id = null;
    expectRejected(frame, "external_tools[0].scope_id");
  });

  it("rejects a group whose tools is not an array", () => {
    const frame = createAgent();
    frame.external_tools[0].tools = { get_weather: {} };
    expectRejected(frame, "external_tools[0].tools");
  });

  it("rejects external_tools that is not an array", () => {
    const frame = createAgent();
    frame.external_tools = { tools: [] };
    expectRejected(frame, "external_tools");
  });

  it("rejects an unknown key on a tool definition (a typo such as inputSchema)", () => {
    const frame = createAgent();
    firstTool(frame).inputSchema = {};
    expectRejected(frame, 'external_tools[0].tools[0]: Unrecognized key: "inputSchema"');
  });
});

describe("runtime_start: other fields", () => {
  it("rejects a mode outside standard, acceptEdits, unrestricted, strict", () => {
    const frame = existingAgent();
    frame.mode = "bypassPermissions";
    expectRejected(frame, "mode: Invalid option");
  });

  it("rejects an unknown skill source", () => {
    const frame = existingAgent();
    frame.skill_sources = ["bundled", "remote"];
    expectRejected(frame, "skill_sources[1]");
  });

  it("accepts cwd null and rejects a numeric cwd", () => {
    const frame = existingAgent();
    frame.cwd = null;
    expectAccepted(frame);
    frame.cwd = 1;
    expectRejected(frame, "cwd");
  });

  it("rejects client_info without a name", () => {
    const frame = createAgent();
    frame.client_info = { title: "x" };
    expectRejected(frame, "client_info.name");
  });

  it.each(["recover_approvals", "force_device_status", "wait_for_replay", "preserve_skill_sources"])(
    "rejects a %s that is not a boolean",
    (field) => {
      const frame = existingAgent();
      frame[field] = "yes";
      expectRejected(frame, field);
    },
  );

  it("rejects conversation_source_tags that are not strings", () => {
    const frame = existingAgent();
    frame.conversation_source_tags = ["sdk", 3];
    expectRejected(frame, "conversation_source_tags[1]");
  });

  it("rejects execution_settings missing its required lists", () => {
    const frame = existingAgent();
    frame.execution_settings = { disable_memory_guard: false };
    expectRejected(frame, "execution_settings.allowed_tools");
  });

  it("rejects workspace_sandbox without isolation_root", () => {
    const frame = existingAgent();
    frame.workspace_sandbox = { root: "/work" };
    expectRejected(frame, "workspace_sandbox.isolation_root");
  });

  it("rejects an unknown top-level key (a typo such as externalTools)", () => {
    const frame = existingAgent();
    frame.externalTools = frame.external_tools;
    expectRejected(frame, 'Unrecognized key: "externalTools"');
  });
});
