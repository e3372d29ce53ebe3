/**
 * Safe by default (issue 26) against the REAL Letta Code app-server (0.32.18, local backend): a
 * session created with no `mode` and no `canUseTool` cannot run the runtime's own shell or file
 * tools (the model's `touch` leaves no file, and the model reads why), while the named opt-out,
 * `mode: "unrestricted"`, can. Which runtime calls reach `canUseTool` in each mode is measured
 * here and pinned (docs/approvals.md "The permission mode" is this table).
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createSession,
  defineTool,
  type ApprovalDecision,
  type ApprovalRequest,
  type PermissionMode,
  type Session,
  type SessionOptions,
} from "../packages/toolrelay/src/index.js";
import { startLettaAppServer, type LettaAppServer } from "../test/support/letta-peer-process.js";
import {
  startScriptedModelServer,
  type ModelRequest,
  type ScriptedModelServer,
  type ScriptedToolCall,
} from "../test/support/scripted-model-server.js";

let model: ScriptedModelServer;
let server: LettaAppServer;
let scratch: string;
const sessions: Session[] = [];

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "toolrelay-safe-defaults-"));
  model = await startScriptedModelServer();
  server = await startLettaAppServer({ modelUrl: model.url });
}, 60_000);

afterAll(async () => {
  for (const session of sessions.splice(0)) await session.close();
  await server?.stop();
  await model?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

beforeEach(() => {
  model.resetScript();
});

/** The model calls `calls` once (a burst), then says `done: <every result>`. */
function scriptBurst(calls: ScriptedToolCall[]): void {
  model.setScript((request: ModelRequest) => {
    if (request.lastMessage?.role === "tool") return { text: `done: ${request.toolResults.map((result) => result.text).join("\n")}` };
    return { toolCalls: calls };
  });
}

async function open(options: Partial<SessionOptions>): Promise<Session> {
  const session = await createSession({
    backend: { kind: "local", url: server.url },
    agent: { create: { model: model.modelHandle, name: "toolrelay-safe-defaults" } },
    conversation: "new",
    ...options,
  } as SessionOptions);
  sessions.push(session);
  return session;
}

/** The tool results the model read after the turn sent at `from`, by tool call id. */
function resultsSince(from: number): Map<string, string> {
  const results = new Map<string, string>();
  for (const request of model.requests.slice(from)) for (const result of request.toolResults) results.set(result.toolCallId, result.text);
  return results;
}

const NO_CALLBACK_DENIAL = "Permission for Bash was denied: this toolrelay session has no canUseTool callback for runtime tools.";

describe("safe by default (real app-server)", () => {
  it("no mode and no canUseTool: the model's Bash touch is denied, the file does not exist, and the model read the denial", async () => {
    const target = join(scratch, "default-touch.txt");
    const session = await open({});
    scriptBurst([{ id: "touch_default", name: "Bash", arguments: { command: `touch ${target}`, description: "create a file" } }]);
    const from = model.requests.length;
    const result = await session.send("create the file").result;

    expect(result.stopReason).toBe("end_turn");
    expect(existsSync(target)).toBe(false);
    expect(resultsSince(from).get("touch_default")).toContain(NO_CALLBACK_DENIAL);
  });

  it('mode: "unrestricted" (the named opt-out): the same touch runs and the file exists', async () => {
    const target = join(scratch, "unrestricted-touch.txt");
    const session = await open({ mode: "unrestricted" });
    scriptBurst([{ id: "touch_unrestricted", name: "Bash", arguments: { command: `touch ${target}`, description: "create a file" } }]);
    const result = await session.send("create the file").result;

    expect(result.stopReason).toBe("end_turn");
    expect(existsSync(target)).toBe(true);
  });

  it("a deny-all canUseTool in the default mode is asked about echo hi and Read too (strict), and nothing runs", async () => {
    const readable = join(scratch, "readable.txt");
    await writeFile(readable, "READABLE-CONTENTS");
    const asked: string[] = [];
    const session = await open({
      canUseTool: (request) => {
        asked.push(`${request.kind} ${request.toolName}`);
        return { behavior: "deny", message: "this app allows no runtime tools" };
      },
    });
    scriptBurst([
      { id: "strict_echo", name: "Bash", arguments: { command: "echo hi", description: "say hi" } },
      { id: "strict_read", name: "Read", arguments: { file_path: readable } },
    ]);
    const from = model.requests.length;
    await session.send("say hi and read").result;

    expect(asked).toEqual(["runtime-tool Bash", "runtime-tool Read"]);
    const results = resultsSince(from);
    expect(results.get("strict_echo")).toContain("this app allows no runtime tools");
    expect(results.get("strict_read")).toContain("this app allows no runtime tools");
    expect(results.get("strict_read")).not.toContain("READABLE-CONTENTS");
  });

  it('mode: "standard": a deny-all canUseTool is NOT asked about echo hi (it runs: a documented runtime fact) but is asked about touch', async () => {
    const target = join(scratch, "standard-touch.txt");
    const asked: string[] = [];
    const session = await open({
      mode: "standard",
      canUseTool: (request) => {
        asked.push(`${request.kind} ${request.toolName} ${String(request.input.command)}`);
        return { behavior: "deny", message: "no" };
      },
    });
    scriptBurst([
      { id: "standard_echo", name: "Bash", arguments: { command: "echo hi", description: "say hi" } },
      { id: "standard_touch", name: "Bash", arguments: { command: `touch ${target}`, description: "create a file" } },
    ]);
    const from = model.requests.length;
    await session.send("say hi and touch").result;

    expect(asked).toEqual([`runtime-tool Bash touch ${target}`]);
    const results = resultsSince(from);
    expect(results.get("standard_echo")).toContain("hi");
    expect(existsSync(target)).toBe(false);
  });

  it("which calls reach canUseTool in each mode (the table of docs/approvals.md)", async () => {
    const table: Record<string, Record<string, string>> = {};
    const note = defineTool({
      name: "note",
      description: "Write a note",
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => `noted ${text}`,
    });
    const clientToolQuestions: string[] = [];
    for (const mode of ["strict", "standard", "acceptEdits", "unrestricted"] as const) {
      const dir = join(scratch, mode);
      const existing = join(dir, "existing.txt");
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await writeFile(existing, "alpha\n");
      const asked = new Set<string>();
      const allowAll = (request: ApprovalRequest): ApprovalDecision => {
        asked.add(`${request.kind}:${request.toolCallId}`);
        if (request.kind === "client-tool") clientToolQuestions.push(`${mode} ${request.toolName}`);
        return { behavior: "allow" };
      };
      const calls: Array<ScriptedToolCall & { label: string }> = [
        { label: 'Bash "echo hi"', id: `${mode}_echo`, name: "Bash", arguments: { command: "echo hi", description: "say hi" } },
        { label: "Read", id: `${mode}_read`, name: "Read", arguments: { file_path: existing } },
        {
          label: 'Bash "touch file"',
          id: `${mode}_touch`,
          name: "Bash",
          arguments: { command: `touch ${join(dir, "touched.txt")}`, description: "create a file" },
        },
        { label: "Write", id: `${mode}_write`, name: "Write", arguments: { file_path: join(dir, "written.txt"), content: "beta\n" } },
        { label: "Edit", id: `${mode}_edit`, name: "Edit", arguments: { file_path: existing, old_string: "alpha", new_string: "gamma" } },
        { label: "client tool", id: `${mode}_note`, name: "note", arguments: { text: "x" } },
      ];
      const session = await open({ mode: mode as PermissionMode, canUseTool: allowAll, tools: [note] });
      scriptBurst(calls);
      const from = model.requests.length;
      await session.send(`the ${mode} burst`).result;
      const results = resultsSince(from);
      table[mode] = Object.fromEntries(
        calls.map((call) => [call.label, asked.has(`runtime-tool:${call.id}`) ? "asked" : results.has(call.id!) ? "unasked" : "no result"]),
      );
      table[mode]!.files = [
        existsSync(join(dir, "touched.txt")) ? "touched" : "-",
        existsSync(join(dir, "written.txt")) ? "written" : "-",
        (await readFile(existing, "utf8")).trim(),
      ].join(" ");
    }
    // Every call got a result in every mode; "asked" = it reached canUseTool (allowed there, so it ran).
    const row = (echo: string, read: string, touch: string, write: string, edit: string) => ({
      'Bash "echo hi"': echo,
      Read: read,
      'Bash "touch file"': touch,
      Write: write,
      Edit: edit,
      "client tool": "unasked",
      files: "touched written gamma",
    });
    expect(table).toEqual({
      strict: row("asked", "asked", "asked", "asked", "asked"),
      standard: row("unasked", "unasked", "asked", "asked", "asked"),
      acceptEdits: row("unasked", "unasked", "asked", "unasked", "unasked"),
      unrestricted: row("unasked", "unasked", "unasked", "unasked", "unasked"),
    });
    // A client tool without needsApproval never reaches canUseTool: the session answers the runtime's question for it.
    expect(clientToolQuestions).toEqual([]);
  }, 120_000);
});
