/**
 * A managed sandbox's TTL against the reference relay and the real listener: a sandbox whose TTL
 * runs out between two turns is reaped by the relay (process, directory, environment), the next
 * turn fails with SANDBOX_EXPIRED before anything is written, and a new session resumes the
 * conversation in a new sandbox; refreshes keep a sandbox alive past its TTL. The relay's TTL
 * minute is 8 s here (a sandbox takes a few seconds to come online), so `ttlMinutes: 1` is an
 * 8-second TTL.
 */
import { existsSync } from "node:fs";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, defineTool, isToolrelayError } from "../packages/toolrelay/src/index.js";
import { call, sandboxSessionOptions, startSandboxStack, type SandboxStack } from "./support/sandbox-stack.js";

const MINUTE_MS = 8_000;
let stack: SandboxStack;

const note = defineTool({
  name: "note",
  description: "Take a note",
  inputSchema: z.object({ text: z.string() }),
  execute: ({ text }) => `noted ${text}`,
});

beforeAll(async () => {
  stack = await startSandboxStack({ minuteMs: MINUTE_MS });
}, 60_000);
afterAll(async () => stack?.stop());

describe("sandbox TTL", () => {
  it("expiry between turns → SANDBOX_EXPIRED before the next turn; a new session resumes the conversation", async () => {
    const first = await createSession(
      sandboxSessionOptions(stack, { sandbox: { createRoute: "sandboxes", ttlMinutes: 1, refreshIntervalMs: 600_000 }, tools: [note] }),
    );
    const sandboxId = first.sandbox!.sandboxId;
    const { directory, deviceId } = (await stack.sandboxes()).find((entry) => entry.sandboxId === sandboxId)!;
    const errors: string[] = [];
    first.on("error", (error) => errors.push(error.code));
    try {
      const one = await first.send(call("note", { text: "before-expiry" })).result;
      expect(one.text).toContain("noted before-expiry");
      expect(await stack.environments()).toContainEqual(expect.objectContaining({ deviceId }));
      // Nothing refreshes it now: the relay reaps it once its TTL minute is up.
      await expect
        .poll(async () => (await stack.sandboxes()).some((entry) => entry.sandboxId === sandboxId), {
          timeout: 3 * MINUTE_MS,
          interval: 200,
        })
        .toBe(false);
      await expect.poll(() => existsSync(directory), { timeout: 5_000 }).toBe(false);
      expect((await stack.environments()).some((entry) => entry.deviceId === deviceId)).toBe(false);

      const requestsBefore = stack.modelRequests().length;
      const error = await first.send(call("note", { text: "after-expiry" })).result.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(isToolrelayError(error, "SANDBOX_EXPIRED")).toBe(true);
      expect(error).toMatchObject({ details: { sandboxId, agentId: first.agentId, conversationId: first.conversationId } });
      expect((error as Error).message).toContain(`conversation: "${first.conversationId}"`);
      // Failed before the turn: the message never reached the model.
      expect(
        stack
          .modelRequests()
          .slice(requestsBefore)
          .some((request) => request.lastUserText.includes("after-expiry")),
      ).toBe(false);
    } finally {
      await first.close();
    }

    const resumed = await createSession(
      sandboxSessionOptions(stack, { agent: { id: first.agentId }, conversation: first.conversationId, tools: [note] }),
    );
    try {
      expect(resumed.sandbox!.sandboxId).not.toBe(sandboxId);
      expect(resumed.conversationId).toBe(first.conversationId);
      const from = stack.modelRequests().length;
      const three = await resumed.send(call("note", { text: "resumed" })).result;
      expect(three.text).toContain("noted resumed");
      // The model sees the conversation so far: the new sandbox continued it.
      const [request] = stack.modelRequests().slice(from);
      expect(request!.userTexts.some((text) => text.includes("before-expiry"))).toBe(true);
      expect(request!.userTexts.some((text) => text.includes("after-expiry"))).toBe(false);
      const [sandbox] = (await stack.sandboxes()).filter((entry) => entry.sandboxId === resumed.sandbox!.sandboxId);
      expect(sandbox).toMatchObject({ agentId: first.agentId, conversationId: first.conversationId });
    } finally {
      await resumed.close();
    }
  }, 120_000);

  it("refreshes keep a sandbox alive well past its TTL", async () => {
    const session = await createSession(
      sandboxSessionOptions(stack, {
        sandbox: { createRoute: "sandboxes", ttlMinutes: 1, refreshIntervalMs: 500, terminateOnClose: true },
        tools: [note],
      }),
    );
    try {
      const sandboxId = session.sandbox!.sandboxId;
      await new Promise((resolve) => setTimeout(resolve, 1.5 * MINUTE_MS));
      expect((await stack.sandboxes()).some((entry) => entry.sandboxId === sandboxId)).toBe(true);
      expect((await session.send(call("note", { text: "still-here" })).result).text).toContain("noted still-here");
    } finally {
      await session.close();
    }
    // terminateOnClose: gone at once, not at the end of its TTL.
    expect((await stack.sandboxes()).some((entry) => entry.sandboxId === session.sandbox!.sandboxId)).toBe(false);
  }, 60_000);
});
