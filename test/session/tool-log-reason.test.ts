/**
 * The `tool call end` log line of a call that did not end `ok` says why (issue 24): the tool's
 * error message, the input's problems, the timeout — not only `outcome=tool-error`.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type LogFields, type Logger } from "../../packages/toolrelay/src/index.js";
import { scriptedRuntime, sessionOn } from "./session-support.js";

function recordingLogger(): Logger & { ends: LogFields[] } {
  const ends: LogFields[] = [];
  const at = () => (fields: LogFields, message: string) => {
    if (message === "tool call end") ends.push(fields);
  };
  return { ends, debug: at(), info: at(), warn: at(), error: at() };
}

const failing = defineTool({
  name: "write_file",
  description: "Fails",
  inputSchema: z.object({ path: z.string() }),
  execute: () => {
    throw new Error("disk full");
  },
});

describe("the tool call end log line", () => {
  it("carries the reason of a call that did not end ok: a thrown error's message, an invalid input's problems", async () => {
    const runtime = await scriptedRuntime({
      script: async (turn) => {
        await turn.callTool("write_file", { path: "notes/x.txt" });
        await turn.callTool("write_file", { path: 42 });
        await turn.say("done");
      },
    });
    const logger = recordingLogger();
    const session = await sessionOn(runtime, { backend: { kind: "local", url: runtime.url, pingIntervalMs: 0 }, tools: [failing], logger });
    await session.send("write it").result;
    await session.close();
    expect(logger.ends).toHaveLength(2);
    expect(logger.ends[0]).toMatchObject({ outcome: "tool-error", reason: expect.stringContaining("disk full") });
    expect(logger.ends[1]).toMatchObject({ outcome: "invalid-input", reason: expect.stringMatching(/^path: /) });
  });
});
