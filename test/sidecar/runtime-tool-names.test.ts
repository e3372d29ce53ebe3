/**
 * A host tool named like one of the runtime's own tools (`Read`, `Bash`, ...): `open_session`
 * refuses it with `reserved_tool_name`, naming the protocol's field, unless the declaration says
 * `overrides_runtime_tool: true`; then the tool replaces the runtime's and its calls come to the
 * host. The field is part of the zod schema of `open_session` (an ill-typed one is `invalid_frame`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime, type ScriptedVisibleTool } from "../../packages/toolrelay/src/testing/index.js";
import { directiveScript, type ToolReturnRecord } from "../fixtures/sidecar/directive-script.js";
import { inProcessSidecar, type AnyFrame, type FrameHost } from "./support/frame-host.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const read = {
  name: "Read",
  description: "HOST-READ: reads a file from the host's document store",
  input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
};

async function setUp(): Promise<{
  runtime: ScriptedRuntime;
  host: FrameHost;
  returns: ToolReturnRecord[];
  visible: () => ScriptedVisibleTool[];
}> {
  const returns: ToolReturnRecord[] = [];
  let visible: ScriptedVisibleTool[] = [];
  let runtime: ScriptedRuntime | undefined;
  const directives = directiveScript(
    () => runtime,
    (record) => returns.push(record),
  );
  runtime = await startScriptedRuntime({
    script: async (turn) => {
      visible = [...turn.tools];
      await directives(turn);
    },
    heartbeatIntervalMs: 0,
  });
  const { sidecar, host } = inProcessSidecar();
  cleanups.push(() => runtime!.close());
  cleanups.push(() => sidecar.stop());
  await host.greet();
  return { runtime, host, returns, visible: () => visible };
}

async function openAnswer(host: FrameHost, session: string, url: string, tools: object[]): Promise<AnyFrame> {
  const from = host.frames.length;
  host.send({ type: "open_session", session, backend: { kind: "local", url }, agent: { create: { model: "scripted/test" } }, tools });
  return host.next((frame) => frame.session === session && (frame.type === "session_opened" || frame.type === "error"), { from });
}

describe("host tools named like the runtime's own tools", () => {
  it("without overrides_runtime_tool: reserved_tool_name, naming the tool and the protocol's field", async () => {
    const { runtime, host } = await setUp();
    for (const [session, tool] of [
      ["plain", read],
      ["false", { ...read, overrides_runtime_tool: false }],
    ] as const) {
      const answer = await openAnswer(host, session, runtime.url, [{ ...tool, name: "get_weather", description: "w" }, tool]);
      expect(answer).toMatchObject({ type: "error", code: "reserved_tool_name", frame_type: "open_session", session });
      expect(answer.message).toContain('tools[1]: "Read"');
      expect(answer.message).toContain('"overrides_runtime_tool": true');
      // The SDK's own option name means nothing to a host.
      expect(answer.message).not.toContain("overridesRuntimeTool");
    }
  });

  it("with overrides_runtime_tool: true, the host's Read replaces the runtime's and its calls come to the host", async () => {
    const { runtime, host, returns, visible } = await setUp();
    expect(await openAnswer(host, "s", runtime.url, [{ ...read, overrides_runtime_tool: true }])).toMatchObject({
      type: "session_opened",
      tools: ["Read"],
    });
    const inputs: unknown[] = [];
    host.answerCalls((call) => {
      inputs.push([call.tool, call.input]);
      return { type: "tool_result", content: [{ type: "text", text: "from the host's store" }] };
    });
    const from = host.frames.length;
    host.send({ type: "send", session: "s", turn: "t1", message: 'CALL Read {"file_path":"notes.txt"}' });
    const end = await host.next({ type: "turn_end", turn: "t1" }, { from });
    expect(end).toMatchObject({ fault: "ok", text: "done: from the host's store" });
    expect(inputs).toEqual([["Read", { file_path: "notes.txt" }]]);
    expect(returns).toEqual([expect.objectContaining({ tool: "Read", toolReturn: "from the host's store", isError: false })]);
    expect(visible().filter((tool) => tool.name === "Read")).toEqual([
      expect.objectContaining({ description: "HOST-READ: reads a file from the host's document store" }),
    ]);
  });

  it("an overrides_runtime_tool that is not a boolean is an invalid_frame naming its path", async () => {
    const { runtime, host } = await setUp();
    const answer = await openAnswer(host, "s", runtime.url, [{ ...read, overrides_runtime_tool: "yes" }]);
    expect(answer).toMatchObject({
      type: "error",
      code: "invalid_frame",
      message: expect.stringContaining("tools[0].overrides_runtime_tool: Invalid input: expected boolean"),
    });
  });
});
