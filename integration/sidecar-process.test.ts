/**
 * The `toolrelay-sidecar` executable (packages/toolrelay/dist/sidecar/bin.js, as users run it)
 * as a child process, on its real stdio: every byte of its stdout over a whole
 * session is a valid frame, even with a library writing to stdout beside it;
 * stderr stays empty without --debug and carries no payload with it; stdin's
 * end makes it answer the runtime's pending call and exit within a second.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime } from "../packages/toolrelay/src/testing/index.js";
import { directiveScript } from "../test/fixtures/sidecar/directive-script.js";
import { FrameHost } from "../test/sidecar/support/frame-host.js";

const root = fileURLToPath(new URL("../", import.meta.url));
const bin = `${root}packages/toolrelay/dist/sidecar/bin.js`;
const noisyLibrary = `${root}test/fixtures/sidecar/noisy-library.mjs`;

interface SidecarProcess {
  child: ChildProcess;
  host: FrameHost;
  stderr: () => string;
  exited: Promise<{ code: number | null; at: number }>;
}

const children: ChildProcess[] = [];
const runtimes: ScriptedRuntime[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function spawnSidecar(args: string[], nodeArgs: string[] = [], env: Record<string, string> = {}): SidecarProcess {
  if (!existsSync(bin)) throw new Error("packages/toolrelay/dist/sidecar/bin.js is missing: run `npm run build` first (npm test does)");
  const child = spawn(process.execPath, [...nodeArgs, bin, ...args], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: process.env.PATH ?? "", ...env },
  });
  children.push(child);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr += text));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once("exit", (code) => resolve({ code, at: performance.now() })),
  );
  return { child, host: new FrameHost(child.stdin!, child.stdout!), stderr: () => stderr, exited };
}

async function scripted(authToken?: string): Promise<ScriptedRuntime> {
  let runtime: ScriptedRuntime | undefined;
  runtime = await startScriptedRuntime({
    script: directiveScript(() => runtime),
    heartbeatIntervalMs: 0,
    ...(authToken ? { authToken } : {}),
  });
  runtimes.push(runtime);
  return runtime;
}

const echo = { name: "echo", description: "Echoes its input", input_schema: { type: "object" } };

describe("toolrelay-sidecar as a process", () => {
  it("writes nothing but frames to stdout over a whole session, with a noisy library in the process; stderr stays empty", async () => {
    const runtime = await scripted();
    const noiseLog = join(mkdtempSync(join(tmpdir(), "toolrelay-sidecar-noise-")), "noise.log");
    const sidecar = spawnSidecar([], ["--import", noisyLibrary], { NOISE_LOG: noiseLog });
    const { host } = sidecar;
    await host.greet();
    sidecar.child.kill("SIGUSR2");
    await expect.poll(() => (existsSync(noiseLog) ? readFileSync(noiseLog, "utf8").length : 0)).toBeGreaterThan(0);
    await host.open("s", runtime.url, [echo]);
    host.answerCalls((call) => ({ type: "tool_result", content: [{ type: "text", text: JSON.stringify(call.input) }] }));
    host.send({ type: "send", session: "s", turn: "t1", message: 'SAY thinking\nCALL echo {"a":1}\nCALL echo {"b":2}' });
    expect(await host.next({ type: "turn_end", turn: "t1" })).toMatchObject({ fault: "ok", text: 'thinkingdone: {"a":1} | {"b":2}' });
    host.sendRaw(Uint8Array.of(0, 0, 0, 2, 0x7b, 0x7b));
    await host.next({ type: "error", code: "malformed_frame" });
    host.send({ type: "close_session", session: "s" });
    await host.next({ type: "session_closed" });
    host.send({ type: "shutdown" });
    const exit = await sidecar.exited;
    expect(exit.code).toBe(0);
    await expect.poll(() => host.ended).toBe(true);
    const all = Buffer.concat(host.bytes);
    expect(all.includes("NOISE")).toBe(false);
    expect(host.problems).toEqual([]);
    // The frames account for every byte: 4 bytes of length and the body, each.
    const framed = host.frames.reduce((total, frame) => total + 4 + Buffer.byteLength(JSON.stringify(frame)), 0);
    expect(framed).toBe(all.length);
    expect(host.frames.map((frame) => frame.type)).toEqual(
      expect.arrayContaining(["welcome", "session_opened", "turn_event", "tool_call", "turn_end", "error", "session_closed", "goodbye"]),
    );
    expect(host.frames.at(-1)).toEqual({ type: "goodbye" });
    expect(sidecar.stderr()).toBe("");
    // The library did write, all along the session.
    expect(readFileSync(noiseLog, "utf8").length).toBeGreaterThan(5);
  });

  it("--debug writes diagnostics to stderr and never a prompt, an input, a result or a credential", async () => {
    const canary = "CANARY7d41";
    const runtime = await scripted(`${canary}-token`);
    const sidecar = spawnSidecar(["--debug"], ["--import", noisyLibrary]);
    const { host } = sidecar;
    await host.greet();
    sidecar.child.kill("SIGUSR2");
    const from = host.frames.length;
    host.send({
      type: "open_session",
      session: "s",
      backend: { kind: "local", url: runtime.url, token: `${canary}-token` },
      agent: { create: { model: "scripted/test", name: `${canary}-agent` } },
      tools: [{ ...echo, description: `${canary} description` }],
    });
    await host.next({ type: "session_opened" }, { from });
    host.answerCalls(() => ({ type: "tool_result", content: [{ type: "text", text: `${canary}-result` }] }));
    host.send({ type: "send", session: "s", turn: "t1", message: `SAY ${canary}-prompt\nCALL echo {"secret":"${canary}-input"}` });
    const end = await host.next({ type: "turn_end", turn: "t1" });
    expect(end.text).toContain(`${canary}-result`);
    host.send({ type: "tool_error", session: "s", call: "call-404", message: `${canary}-error` });
    await host.next({ type: "error", code: "unknown_call" });
    host.send({ type: "shutdown" });
    await sidecar.exited;
    const stderr = sidecar.stderr();
    expect(stderr).toContain("-> type=tool_call session=s turn=t1 call=call-");
    expect(stderr).toContain("<- type=tool_result session=s call=");
    expect(stderr).toContain("turn-end session=s turn=t1 fault=ok");
    expect(stderr).toContain("swallowed, not shown");
    expect(stderr).not.toContain(canary);
    expect(stderr).not.toContain("NOISE");
  });

  it("stdin's end answers the runtime's pending call and the process is gone within 1 s", async () => {
    const runtime = await scripted();
    const sidecar = spawnSidecar([]);
    const { host } = sidecar;
    await host.greet();
    await host.open("s", runtime.url, [echo]);
    host.send({ type: "send", session: "s", turn: "t1", message: 'CALL echo {"a":1}' });
    await host.next({ type: "tool_call" });
    const closedAt = performance.now();
    host.endInput();
    const exit = await sidecar.exited;
    expect(exit.code).toBe(0);
    expect(exit.at - closedAt).toBeLessThan(1_000);
    expect(runtime.calls[0]).toMatchObject({ status: "answered", response: { error: expect.stringContaining("cancelled") } });
  });

  it("prints usage and version to stderr (never stdout), and refuses bad arguments with code 2", async () => {
    for (const [args, code, text] of [
      [["--help"], 0, "Usage: toolrelay-sidecar"],
      [["--version"], 0, "0.1.0"],
      [["--encoding", "xml"], 2, "--encoding must be json or msgpack"],
      [["--max-frame-bytes", "12"], 2, "--max-frame-bytes must be an integer"],
      [["--frobnicate"], 2, "Unknown option"],
    ] as const) {
      const sidecar = spawnSidecar([...args]);
      const exit = await sidecar.exited;
      expect(exit.code, args.join(" ")).toBe(code);
      expect(sidecar.stderr()).toContain(text);
      expect(Buffer.concat(sidecar.host.bytes).length).toBe(0);
    }
  });
});
