import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../packages/toolrelay/src/index.js";
import { scriptedRuntime, sessionOn } from "./session-support.js";

const echo = defineTool({ name: "echo", description: "Echo", inputSchema: z.object({ text: z.string() }), execute: ({ text }) => text });

function approvalAnswers(frames: ReadonlyArray<{ type: string | undefined; frame: unknown }>) {
  return frames
    .filter((record) => record.type === "input")
    .map((record) => (record.frame as { payload: { kind: string; request_id?: string; decision?: unknown } }).payload)
    .filter((payload) => payload.kind === "approval_response");
}

describe("session: permission requests", () => {
  it("allows its own client tools in standard mode", async () => {
    const runtime = await scriptedRuntime({
      permissionMode: "standard",
      script: async (turn) => void (await turn.callTool("echo", { text: "hi" })),
    });
    const session = await sessionOn(runtime, { tools: [echo], mode: "standard" });
    await session.send("go").result;
    expect(runtime.calls[0]!.result!.toolReturn).toBe("hi");
    expect(approvalAnswers(runtime.frames)).toEqual([expect.objectContaining({ decision: { behavior: "allow" } })]);
  });

  it("denies a runtime tool with a clear message when there is no canUseTool callback", async () => {
    const runtime = await scriptedRuntime({
      permissionMode: "standard",
      script: async (turn) => {
        const result = await turn.callTool("Bash", { command: "rm -rf /" }).catch((error: Error) => ({ toolReturn: error.message }));
        await turn.say(String(result.toolReturn));
      },
    });
    const session = await sessionOn(runtime, { tools: [echo], mode: "standard" });
    await session.send("go").result;
    const answers = approvalAnswers(runtime.frames);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.decision).toMatchObject({ behavior: "deny", message: expect.stringContaining("no canUseTool callback") });
  });

  it("asks canUseTool for runtime tools and passes its decision through", async () => {
    const runtime = await scriptedRuntime({
      permissionMode: "standard",
      script: async (turn) => void (await turn.callTool("Bash", { command: "ls" }).catch(() => undefined)),
    });
    const asked: string[] = [];
    const session = await sessionOn(runtime, {
      mode: "standard",
      canUseTool: (request) => {
        asked.push(`${request.toolName}:${JSON.stringify(request.input)}`);
        return { behavior: "deny", message: "not here" };
      },
    });
    await session.send("go").result;
    expect(asked).toEqual(['Bash:{"command":"ls"}']);
    expect(approvalAnswers(runtime.frames)[0]!.decision).toEqual({ behavior: "deny", message: "not here" });
  });
});
