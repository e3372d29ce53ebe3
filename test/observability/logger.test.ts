/**
 * The `logger` option: a pino-shaped logger gets the session's life as `(fields, message)` lines
 * with a `component`; no prompt, tool input or result unless `logPayloads`; credentials redacted
 * in every line, payload lines included; a logger that throws changes nothing.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type LogFields, type Logger } from "../../packages/toolrelay/src/index.js";
import { scriptedRuntime, sessionOn } from "../session/session-support.js";

const CANARY = "canary-payload-51c2";
const TOKEN = "secret-token-0b9e77d1c4";

interface Line {
  level: keyof Logger;
  fields: LogFields;
  message: string;
}

function recordingLogger(): Logger & { lines: Line[] } {
  const lines: Line[] = [];
  const at = (level: keyof Logger) => (fields: LogFields, message: string) => {
    lines.push({ level, fields, message });
  };
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

const echo = defineTool({
  name: "echo",
  description: "Echoes its text (and leaks the token into its result, on purpose)",
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => `echo ${text} with ${TOKEN}`,
});

async function authRuntime() {
  return scriptedRuntime({
    authToken: TOKEN,
    script: async (turn) => {
      await turn.callTool("echo", { text: CANARY });
      await turn.say(`said ${CANARY}`);
    },
  });
}

async function session(options: { logger: Logger; logPayloads?: boolean }) {
  const runtime = await authRuntime();
  return sessionOn(runtime, { backend: { kind: "local", url: runtime.url, token: TOKEN, pingIntervalMs: 0 }, tools: [echo], ...options });
}

describe("the logger option", () => {
  it("gets the session's life as (fields, message) lines, with no payload", async () => {
    const logger = recordingLogger();
    const opened = await session({ logger });
    await opened.send(`echo ${CANARY}, please`).result;
    await opened.close();
    const messages = logger.lines.map((line) => `${line.fields.component} ${line.message}`);
    for (const expected of [
      "toolrelay:session session open",
      "toolrelay:turn turn start",
      "toolrelay:tool tool call start",
      "toolrelay:tool tool call end",
      "toolrelay:turn turn end",
      "toolrelay:session session close",
    ]) {
      expect(messages).toContain(expected);
    }
    const end = logger.lines.find((line) => line.message === "tool call end")!;
    expect(end).toMatchObject({ level: "info", fields: { toolName: "echo", outcome: "ok", durationMs: expect.any(Number) } });
    expect(logger.lines.find((line) => line.message === "turn end")!.fields).toMatchObject({
      stopReason: "end_turn",
      toolCalls: 1,
      agentId: opened.agentId,
      conversationId: opened.conversationId,
    });
    const text = JSON.stringify(logger.lines);
    expect(text).not.toContain(CANARY);
    expect(text).not.toContain(TOKEN);
  });

  it("logPayloads adds the prompt, the input and the result at debug level, credentials still redacted", async () => {
    const logger = recordingLogger();
    const opened = await session({ logger, logPayloads: true });
    await opened.send(`echo ${CANARY} and ${TOKEN}`).result;
    const start = logger.lines.find((line) => line.message === "turn start")!;
    const request = logger.lines.find((line) => line.message === "tool call request")!;
    const end = logger.lines.find((line) => line.message === "tool call end")!;
    expect(start.fields.prompt).toBe(`echo ${CANARY} and [redacted]`);
    expect(request).toMatchObject({ level: "debug", fields: { input: JSON.stringify({ text: CANARY }) } });
    expect(end.fields.result).toContain(`echo ${CANARY} with [redacted]`);
    expect(JSON.stringify(logger.lines)).not.toContain(TOKEN);
  });

  it("a logger that throws changes nothing", async () => {
    const throwing: Logger = {
      debug: () => {
        throw new Error("logger bug");
      },
      info: () => {
        throw new Error("logger bug");
      },
      warn: () => {
        throw new Error("logger bug");
      },
      error: () => {
        throw new Error("logger bug");
      },
    };
    const opened = await session({ logger: throwing });
    await expect(opened.send("go").result).resolves.toMatchObject({ stopReason: "end_turn", text: `said ${CANARY}` });
  });
});
