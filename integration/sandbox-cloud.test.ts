/**
 * SDK-managed sandboxes end to end: the SDK (this process) asks the reference relay (a process)
 * for a sandbox; the relay starts a REAL Letta Code listener (a process, letta-code 0.32.18) in
 * the sandbox's own directory and namespaces; the directive model is a process too. Client tools
 * run here; built-in tools run in the sandbox. One stack for the file.
 */
import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { z } from "zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSession, defineTool, type Session, type ToolCallEndEvent, type Turn } from "../packages/toolrelay/src/index.js";
import { CALLER_ENV_CANARY, call, sandboxSessionOptions, startSandboxStack, type SandboxStack } from "./support/sandbox-stack.js";

const callerDir = realpathSync(mkdtempSync(join(tmpdir(), "toolrelay-caller-")));
const canaryPath = join(callerDir, "canary.txt");
const fileCanary = `file-canary-${randomUUID()}`;
const envCanary = `env-canary-${randomUUID()}`;
writeFileSync(canaryPath, `${fileCanary}\n`);
process.env[CALLER_ENV_CANARY] = envCanary;

const pids: Array<{ pid: number; toolCallId: string; conversationId: string }> = [];
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

const tools = [
  defineTool({
    name: "record_pid",
    description: "Say which process runs this tool",
    inputSchema: z.object({ label: z.string() }),
    async execute({ label }, context) {
      pids.push({ pid: process.pid, toolCallId: context.toolCallId, conversationId: context.conversationId });
      return `${label}: pid ${process.pid}`;
    },
  }),
  defineTool({
    name: "read_caller_file",
    description: "Read a file from the caller's directory",
    inputSchema: z.object({ name: z.string().regex(/^[\w.-]+$/) }),
    execute: ({ name }) => readFileSync(join(callerDir, name), "utf8"),
  }),
  defineTool({
    name: "explode",
    description: "Throws",
    inputSchema: z.object({}),
    execute: () => {
      throw new Error("the callback exploded");
    },
  }),
  defineTool({
    name: "reject_plain",
    description: "Rejects with a value that is not an Error",
    inputSchema: z.object({}),
    execute: () => Promise.reject("plain rejection value"),
  }),
  defineTool({
    name: "too_slow",
    description: "Never finishes in time",
    inputSchema: z.object({}),
    timeoutMs: 300,
    execute: async (_input, context) => {
      await sleep(20_000, context.signal);
      return "too late";
    },
  }),
  defineTool({
    name: "long_wait",
    description: "Waits, then answers",
    inputSchema: z.object({ ms: z.number() }),
    execute: async ({ ms }, context) => {
      await sleep(ms, context.signal);
      return `waited ${ms} ms`;
    },
  }),
];

let stack: SandboxStack;
let session: Session;
let createToReadyMs = 0;

beforeAll(async () => {
  stack = await startSandboxStack({ callerCanary: envCanary });
  // The agent is created inside the first sandbox: "sandboxes" route, no agent id yet.
  // mode "unrestricted": the built-in Read and Bash running inside the sandbox are a subject here;
  // the default mode (strict) would deny them, this session having no canUseTool.
  session = await createSession(
    sandboxSessionOptions(stack, { sandbox: { createRoute: "sandboxes", terminateOnClose: true }, tools, mode: "unrestricted" }),
  );
  createToReadyMs = session.sandbox!.readyAt - session.sandbox!.createdAt;
  console.info(`[sandbox] create → ready (listener online): ${createToReadyMs} ms`);
}, 120_000);

afterAll(async () => {
  await session?.close();
  await stack?.stop();
  rmSync(callerDir, { recursive: true, force: true });
  delete process.env[CALLER_ENV_CANARY];
});

function collectEnds(target: Session): ToolCallEndEvent[] {
  const ends: ToolCallEndEvent[] = [];
  target.on("tool-call-end", (event) => ends.push(event));
  return ends;
}

describe("a cloud session on an SDK-managed sandbox", () => {
  it("runs a JavaScript callback in the SDK process (the callback records process.pid)", async () => {
    const before = pids.length;
    const result = await session.send(call("record_pid", { label: "pid-1" })).result;
    expect(result.stopReason).toBe("end_turn");
    expect(pids.slice(before)).toEqual([expect.objectContaining({ pid: process.pid, conversationId: session.conversationId })]);
    expect(result.text).toContain(`pid-1: pid ${process.pid}`);
    const [sandbox] = (await stack.sandboxes()).filter((entry) => entry.sandboxId === session.sandbox!.sandboxId);
    expect(sandbox).toMatchObject({ online: true });
    expect(sandbox!.agentId).toBeUndefined();
    expect(sandbox!.pid).not.toBe(process.pid);
  }, 60_000);

  it("its result returns to the same sandbox run: the model's next request carries it, paired by tool_call_id", async () => {
    let toolCallId = "";
    session.once("tool-call-start", (event) => (toolCallId = event.toolCallId));
    const from = stack.modelRequests().length;
    const result = await session.send(call("record_pid", { label: "pair-2" })).result;
    expect(result.stopReason).toBe("end_turn");
    expect(toolCallId).not.toBe("");
    const followUps = stack
      .modelRequests()
      .slice(from)
      .filter((request) => request.toolResults.some((entry) => entry.toolCallId === toolCallId));
    expect(followUps).toHaveLength(1);
    const [next] = followUps;
    expect(next!.assistantToolCalls).toContainEqual({ id: toolCallId, name: "record_pid" });
    expect(next!.toolResults.find((entry) => entry.toolCallId === toolCallId)!.text).toContain(`pair-2: pid ${process.pid}`);
    const runtimeCall = result.events.find((event) => event.type === "tool-call" && event.toolCallId === toolCallId);
    expect(runtimeCall).toMatchObject({ toolName: "record_pid", owner: "client" });
  }, 60_000);

  it("built-in Read and Bash see the sandbox's files, not the caller's; a client tool reads the caller's canary", async () => {
    const [sandbox] = (await stack.sandboxes()).filter((entry) => entry.sandboxId === session.sandbox!.sandboxId);
    const workspace = sandbox!.workspace;
    const from = stack.modelRequests().length;
    const bash = `pwd; echo "HOME=$HOME"; ls ${callerDir} 2>&1; cat ${canaryPath} 2>&1; echo "caller env: \${${CALLER_ENV_CANARY}:-unset}"; cat ${join(process.cwd(), "package.json")} 2>&1; echo made-in-sandbox > made.txt; ls /tmp`;
    const result = await session.send(
      [
        call("Read", { file_path: canaryPath }),
        call("Bash", { command: bash, description: "look around" }),
        call("read_caller_file", { name: "canary.txt" }),
      ].join("\n"),
    ).result;
    expect(result.stopReason).toBe("end_turn");
    const results = stack
      .modelRequests()
      .slice(from)
      .flatMap((request) => request.toolResults.map((entry) => entry.text));
    const [readText, bashText, clientText] = [results[0] ?? "", results[1] ?? "", results[2] ?? ""];
    console.info(
      `[sandbox] what the sandbox saw:\n--- Read ${canaryPath} ---\n${readText}\n--- Bash ---\n${bashText}\n--- read_caller_file (client tool) ---\n${clientText}`,
    );
    expect(readText).not.toContain(fileCanary);
    expect(readText.toLowerCase()).toMatch(/not exist|no such file|not found|enoent/);
    expect(bashText).not.toContain(fileCanary);
    expect(bashText).not.toContain(envCanary);
    expect(bashText.split("\n")[0]).toBe(workspace);
    expect(bashText).toContain(`HOME=${join(sandbox!.directory, "home")}`);
    expect(bashText).toContain(`ls: cannot access '${callerDir}': No such file or directory`);
    expect(bashText).toContain("caller env: unset");
    expect(bashText).toContain(`cat: ${join(process.cwd(), "package.json")}: No such file or directory`);
    expect(clientText).toContain(fileCanary);
    expect(readFileSync(join(workspace, "made.txt"), "utf8")).toBe("made-in-sandbox\n");
    expect(existsSync(join(callerDir, "made.txt"))).toBe(false);
  }, 60_000);
});

interface OutcomeRow {
  scenario: string;
  outcome: string;
  stopReason: string;
  ms: number;
}
const table: OutcomeRow[] = [];

describe("every failure of a callback settles and the turn ends within seconds", () => {
  afterAll(() => {
    if (table.length === 0) return;
    const lines = table.map((row) => `| ${row.scenario} | ${row.outcome} | ${row.stopReason} | ${row.ms} |`);
    console.info(
      `[sandbox] outcome → time (send → turn end)\n| scenario | call outcome | stop reason | ms |\n| --- | --- | --- | --- |\n${lines.join("\n")}`,
    );
  });

  async function measure(scenario: string, message: string, onStart?: (turn: Turn) => Promise<unknown> | undefined): Promise<OutcomeRow> {
    const ends = collectEnds(session);
    let turn: Turn | undefined;
    const started = Date.now();
    const fault = new Promise<unknown>((resolve, reject) => {
      if (!onStart) return resolve(undefined);
      session.once("tool-call-start", () => {
        Promise.resolve()
          .then(() => onStart(turn!))
          .then(resolve, reject);
      });
    });
    turn = session.send(message);
    const result = await turn.result;
    await fault;
    const ms = Date.now() - started;
    await expect.poll(() => ends.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    session.removeAllListeners("tool-call-end");
    expect(ends).toHaveLength(1);
    const row = { scenario, outcome: ends[0]!.outcome, stopReason: result.stopReason, ms };
    table.push(row);
    return row;
  }

  it("the callback throws → tool-error, the turn goes on", async () => {
    await expect(measure("callback throws", call("explode", {}))).resolves.toMatchObject({ outcome: "tool-error", stopReason: "end_turn" });
  }, 30_000);

  it("the callback rejects with a non-Error → tool-error", async () => {
    await expect(measure("callback rejects (not an Error)", call("reject_plain", {}))).resolves.toMatchObject({
      outcome: "tool-error",
      stopReason: "end_turn",
    });
  }, 30_000);

  it("the callback passes its deadline → timeout result, the turn goes on", async () => {
    await expect(measure("callback timeout (300 ms)", call("too_slow", {}))).resolves.toMatchObject({
      outcome: "timeout",
      stopReason: "end_turn",
    });
  }, 30_000);

  it("the turn is aborted mid-call → cancelled", async () => {
    const row = await measure("cancellation (turn aborted mid-call)", call("long_wait", { ms: 20_000 }), (turn) => {
      void turn.abort();
      return undefined;
    });
    // The call is answered cancelled at once. The stop reason is the runtime's: 0.32.18 answers
    // the abort of a running turn `aborted: false` now and then (6 of 27 runs here), and the
    // turn then goes on with the cancelled answer to end_turn; either way it ends (the table
    // above says how fast).
    expect(row.outcome).toBe("cancelled");
    expect(["cancelled", "end_turn"]).toContain(row.stopReason);
  }, 30_000);

  it("the client's sockets are cut mid-call → the answer crosses the reconnect", async () => {
    const states: string[] = [];
    session.on("connection-state-change", (event) => states.push(event.state));
    const row = await measure("client disconnect (SDK sockets cut)", call("long_wait", { ms: 800 }), () =>
      stack.hook("drop-sdk-sockets", { connectionId: session.connectionId, terminate: true }),
    );
    session.removeAllListeners("connection-state-change");
    expect(row).toMatchObject({ outcome: "ok", stopReason: "end_turn" });
    expect(states).toEqual(["reconnecting", "open"]);
  }, 30_000);

  it("the sandbox's listener reconnects mid-call → the answer reaches it", async () => {
    const readyLines = () =>
      stack
        .relayOutput()
        .split("\n")
        .filter((line) => line.includes("relay: listener ready") && line.includes(session.connectionId)).length;
    const before = readyLines();
    const row = await measure("sandbox reconnect (listener sockets closed)", call("long_wait", { ms: 800 }), async () => {
      await expect(
        stack.hook("close-listener", { connectionId: session.connectionId, code: 1012, reason: "forced sandbox reconnect" }),
      ).resolves.toEqual({ closed: true });
    });
    expect(row).toMatchObject({ outcome: "ok", stopReason: "end_turn" });
    expect(readyLines()).toBe(before + 1);
  }, 30_000);
});

describe("two sandboxes × two conversations, concurrently", () => {
  it("every call is answered in its own scope", async () => {
    const bootstrap = await createSession(sandboxSessionOptions(stack, { sandbox: { createRoute: "sandboxes", terminateOnClose: true } }));
    const agents = [session.agentId, bootstrap.agentId];
    await bootstrap.close();
    const calls: Array<{ session: number; row: string; agentId: string; conversationId: string }> = [];
    const scoped = (index: number) =>
      defineTool({
        name: "scope_echo",
        description: "Echo a row, noting where it ran",
        inputSchema: z.object({ row: z.string() }),
        execute: async ({ row }, context) => {
          calls.push({ session: index, row, agentId: context.agentId, conversationId: context.conversationId });
          await sleep(50);
          return `echo ${row}`;
        },
      });
    const sessions = await Promise.all(
      [0, 0, 1, 1].map((agent, index) =>
        createSession(sandboxSessionOptions(stack, { agent: { id: agents[agent]! }, tools: [scoped(index)] })),
      ),
    );
    try {
      const [a1, a2, b1, b2] = sessions;
      console.info(
        `[sandbox] create → ready, 4 sessions at once: ${sessions.map((entry) => `${entry.sandbox!.readyAt - entry.sandbox!.createdAt} ms${entry.sandbox!.resumed ? " (resumed)" : ""}`).join(", ")}`,
      );
      expect(a1!.sandbox!.sandboxId).toBe(a2!.sandbox!.sandboxId);
      expect(b1!.sandbox!.sandboxId).toBe(b2!.sandbox!.sandboxId);
      expect(a1!.sandbox!.sandboxId).not.toBe(b1!.sandbox!.sandboxId);
      expect([a1, a2].filter((entry) => entry!.sandbox!.resumed)).toHaveLength(1);
      // Four runtimes: a runtime is an agent and a conversation. The stand-in for Cloud's store is
      // one Letta Code local backend directory shared by the sandbox processes, and each process
      // numbers its conversations from what it read at start (local-conv-<n>): two sandboxes
      // creating conversations at once can hand out the same number, for different agents.
      expect(new Set(sessions.map((entry) => `${entry.agentId}/${entry.conversationId}`)).size).toBe(4);
      const texts = await Promise.all(
        sessions.map(async (entry, index) => {
          const out: string[] = [];
          for (let turn = 0; turn < 3; turn++) out.push((await entry.send(call("scope_echo", { row: `s${index}-t${turn}` })).result).text);
          return out;
        }),
      );
      for (const [index, out] of texts.entries()) {
        for (const [turn, text] of out.entries()) expect(text).toContain(`echo s${index}-t${turn}`);
      }
      expect(calls).toHaveLength(12);
      for (const entry of calls) {
        expect(entry.row.startsWith(`s${entry.session}-`)).toBe(true);
        expect(entry.conversationId).toBe(sessions[entry.session]!.conversationId);
        expect(entry.agentId).toBe(agents[entry.session < 2 ? 0 : 1]);
      }
      const listed = await stack.environments();
      for (const entry of [a1, b1])
        expect(listed).toContainEqual(expect.objectContaining({ deviceId: entry!.sandbox!.deviceId, connectionId: expect.any(String) }));
    } finally {
      await Promise.all(sessions.map((entry) => entry.close()));
    }
  }, 180_000);
});
