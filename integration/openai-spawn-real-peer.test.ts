/**
 * A bridge on a local `{ spawn }` backend starts ONE real Letta Code app-server (0.32.18) and
 * shares it between its threads (not one server per conversation), and stops it on close.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { startOpenAiBridge } from "../packages/toolrelay/src/openai/index.js";
import { LETTA_CLI, LETTA_NODE_BINARY } from "../test/support/letta-peer-process.js";
import { LETTA_BASE_ENV } from "../test/support/peer-process.js";
import { startScriptedModelServer } from "../test/support/scripted-model-server.js";

const home = mkdtempSync(join(tmpdir(), "toolrelay-letta-home-"));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** This process's children that run the Letta Code CLI. */
function lettaChildren(): number[] {
  const out = execFileSync("ps", ["-o", "pid=,args=", "--ppid", String(process.pid)], { encoding: "utf8" });
  return out
    .split("\n")
    .filter((line) => line.includes(LETTA_CLI))
    .map((line) => Number.parseInt(line.trim(), 10));
}

describe("a bridge on a local { spawn } backend", () => {
  it("starts one app-server for all its threads and stops it on close", async () => {
    const model = await startScriptedModelServer({ script: (request) => ({ text: `echo: ${request.lastUserText}` }) });
    const before = lettaChildren();
    const bridge = await startOpenAiBridge({
      backend: {
        kind: "local",
        spawn: {
          command: LETTA_NODE_BINARY,
          commandArgs: [LETTA_CLI],
          env: { ...LETTA_BASE_ENV, HOME: home, LLAMA_CPP_BASE_URL: model.url },
        },
      },
      agent: { create: { model: model.modelHandle, name: "openai-spawn" } },
    });
    try {
      const client = new OpenAI({ apiKey: "unused", baseURL: bridge.url, maxRetries: 0 });
      const [one, two] = await Promise.all([
        client.chat.completions.create({ model: "letta-code", messages: [{ role: "user", content: "first" }] }),
        client.chat.completions.create({ model: "letta-code", messages: [{ role: "user", content: "second" }] }),
      ]);
      expect([one.choices[0]!.message.content, two.choices[0]!.message.content]).toEqual(["echo: first", "echo: second"]);
      expect(new Set(bridge.threads().map((thread) => thread.conversationId)).size).toBe(2);
      // One agent for the (one, anonymous) key, created once although both threads opened at once.
      expect(new Set(bridge.threads().map((thread) => thread.agentId)).size).toBe(1);
      const spawned = lettaChildren().filter((pid) => !before.includes(pid));
      expect(spawned).toHaveLength(1);
    } finally {
      await bridge.close();
      await model.close();
    }
    expect(lettaChildren().filter((pid) => !before.includes(pid))).toEqual([]);
  });
});
