/**
 * The `toolrelay-sidecar` executable (as users run it) against docs/sidecar.md's error table, on
 * its real stdio: a frame of a known type before `hello` gets `hello_required` whatever its fields
 * (only `hello` and `shutdown` are checked field by field before it), and a `tool_result` or
 * `tool_error` for a session that is not open gets `unknown_session` — while an answer to a call
 * the sidecar cancelled stays silent, also once its session is closed, and an answer to no call of
 * an open session stays `unknown_call`. And approvals (protocol version 2): a `needs_approval` tool
 * runs only after the host's `approval_response` allows it, and every answer the sidecar cannot use
 * — for no such approval, twice, another session's, a bad shape — gets its named error frame.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime } from "../packages/toolrelay/src/testing/index.js";
import { directiveScript } from "../test/fixtures/sidecar/directive-script.js";
import type { AnyFrame, FrameHost } from "../test/sidecar/support/frame-host.js";
import { spawnSidecarProcess, type SidecarProcess } from "../test/sidecar/support/sidecar-process.js";

const processes: SidecarProcess[] = [];
const runtimes: ScriptedRuntime[] = [];
afterEach(async () => {
  for (const sidecar of processes.splice(0)) sidecar.kill();
  for (const runtime of runtimes.splice(0)) await runtime.close();
});

function start(): FrameHost {
  const sidecar = spawnSidecarProcess();
  processes.push(sidecar);
  return sidecar.host;
}

async function scripted(): Promise<ScriptedRuntime> {
  let runtime: ScriptedRuntime | undefined;
  runtime = await startScriptedRuntime({ script: directiveScript(() => runtime), heartbeatIntervalMs: 0 });
  runtimes.push(runtime);
  return runtime;
}

/** The error frames written since `from`, once `count` of them came. */
async function errorsAfter(host: FrameHost, from: number, count: number): Promise<AnyFrame[]> {
  await expect
    .poll(() => host.frames.slice(from).filter((frame) => frame.type === "error").length, { timeout: 10_000 })
    .toBeGreaterThanOrEqual(count);
  return host.frames.slice(from).filter((frame) => frame.type === "error");
}

const echo = { name: "echo", description: "Echoes its input", input_schema: { type: "object" } };

describe("toolrelay-sidecar's error codes, as docs/sidecar.md names them", () => {
  it("before hello: hello_required for any known frame but hello and shutdown, valid or not", async () => {
    const host = start();
    const frames: object[] = [
      // Invalid: an unknown field, a missing one, a wrong type.
      { type: "open_session", session: "s", backend: { kind: "local", url: "ws://127.0.0.1:1/ws" }, agent: { id: "a" }, tols: [] },
      { type: "send", session: "s", turn: "t" },
      { type: "tool_result", session: "s", call: "call-1", content: "not blocks" },
      { type: "tool_error", session: "s", call: "call-1" },
      // Valid.
      { type: "abort", session: "s" },
      { type: "close_session", session: "s" },
    ];
    for (const frame of frames) host.send(frame);
    const errors = await errorsAfter(host, 0, frames.length);
    expect(errors.map((error) => [error.code, error.frame_type, error.session])).toEqual(
      frames.map((frame) => ["hello_required", (frame as { type: string }).type, "s"]),
    );
    expect(errors[0]!.message).toBe("the first frame must be hello");
    // hello itself is checked field by field; an unknown type and a malformed body keep their own codes.
    const from = host.frames.length;
    host.send({ type: "hello", versions: "1" });
    host.send({ type: "launch_rockets" });
    host.sendRaw(Uint8Array.of(0, 0, 0, 1, 0x7b));
    expect((await errorsAfter(host, from, 3)).map((error) => error.code)).toEqual([
      "invalid_frame",
      "unknown_frame_type",
      "malformed_frame",
    ]);
    expect(await host.greet()).toMatchObject({ type: "welcome", version: 2 });
  });

  it("a tool answer for a session that is not open: unknown_session; for no call of an open one: unknown_call; after cancel: silence", async () => {
    const runtime = await scripted();
    const host = start();
    await host.greet();
    await host.open("s", runtime.url, [echo]);
    host.send({ type: "send", session: "s", turn: "t1", message: 'CALL echo {"a":1}' });
    const call = await host.next({ type: "tool_call", session: "s" });
    let from = host.frames.length;
    host.send({ type: "tool_result", session: "never-opened", call: call.call, content: [] });
    host.send({ type: "tool_error", session: "never-opened", call: "call-404", message: "x" });
    host.send({ type: "tool_result", session: "s", call: "call-404", content: [] });
    expect((await errorsAfter(host, from, 3)).map((error) => [error.code, error.frame_type, error.session, error.call])).toEqual([
      ["unknown_session", "tool_result", "never-opened", call.call],
      ["unknown_session", "tool_error", "never-opened", "call-404"],
      ["unknown_call", "tool_result", "s", "call-404"],
    ]);
    expect(host.frames.slice(from).find((frame) => frame.type === "error")!.message).toBe("session never-opened is not open");

    // Closing the session cancels its call; the host's answer to it afterwards is late: no error.
    host.send({ type: "close_session", session: "s" });
    await host.next({ type: "cancel", call: call.call }, { from });
    await host.next({ type: "session_closed", session: "s" }, { from });
    from = host.frames.length;
    host.send({ type: "tool_result", session: "s", call: call.call, content: [{ type: "text", text: "late" }] });
    host.send({ type: "tool_error", session: "s", call: "call-404", message: "x" });
    // Frames are handled in order: the first error after the late answer is the next frame's.
    expect((await errorsAfter(host, from, 1)).map((error) => [error.code, error.call])).toEqual([["unknown_session", "call-404"]]);
    expect(runtime.calls[0]).toMatchObject({ status: "answered", response: { error: expect.stringContaining("cancelled") } });
  });

  it("approvals: the call runs only once allowed; unknown, repeated, another session's and malformed answers each get their error", async () => {
    const runtime = await scripted();
    const host = start();
    await host.greet();
    const guarded = { ...echo, name: "guarded", needs_approval: true };
    await host.open("s", runtime.url, [guarded], { options: { approvals: true } });
    await host.open("other", runtime.url, [], { options: { approvals: true } });
    host.answerCalls((call) => ({ type: "tool_result", content: [{ type: "text", text: `ran ${JSON.stringify(call.input)}` }] }));

    let from = host.frames.length;
    host.send({ type: "send", session: "s", turn: "t1", message: 'CALL guarded {"a":1}' });
    const request = await host.next({ type: "approval_request", session: "s" }, { from });
    expect(request).toMatchObject({ kind: "client_tool", tool: "guarded", input: { a: 1 }, turn: "t1" });
    const asked = host.frames.length;
    host.send({ type: "approval_response", session: "s", approval: "approval-404", allow: true });
    host.send({ type: "approval_response", session: "other", approval: request.approval, allow: true });
    host.send({ type: "approval_response", session: "s", approval: request.approval, allow: "yes" });
    expect((await errorsAfter(host, asked, 3)).map((error) => [error.code, error.session, error.approval])).toEqual([
      ["unknown_approval", "s", "approval-404"],
      ["unknown_approval", "other", request.approval],
      ["invalid_frame", "s", request.approval],
    ]);
    // The malformed answer denied it (fail closed): no tool_call was sent, the model read the denial.
    const end = await host.next({ type: "turn_end", turn: "t1" }, { from });
    expect(end).toMatchObject({ fault: "ok", tool_calls: [{ call: null, tool: "guarded", outcome: "denied" }] });
    expect(host.frames.slice(from).some((frame) => frame.type === "tool_call")).toBe(false);
    from = host.frames.length;
    host.send({ type: "approval_response", session: "s", approval: request.approval, allow: true });
    expect((await errorsAfter(host, from, 1)).map((error) => [error.code, error.message])).toEqual([
      ["unknown_approval", `approval ${request.approval} of session s was answered already; the first answer stands`],
    ]);

    // Allowed: the tool_call follows the approval, and the model reads the host's result.
    from = host.frames.length;
    host.send({ type: "send", session: "s", turn: "t2", message: 'CALL guarded {"a":2}' });
    const second = await host.next({ type: "approval_request", session: "s" }, { from });
    host.send({ type: "approval_response", session: "s", approval: second.approval, allow: true });
    expect(await host.next({ type: "turn_end", turn: "t2" }, { from })).toMatchObject({ fault: "ok", text: 'done: ran {"a":2}' });
    expect(host.problems).toEqual([]);
  });
});
