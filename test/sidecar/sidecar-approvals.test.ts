/**
 * Approvals over the sidecar protocol (version 2), in process against the scripted runtime: a
 * `needs_approval` host tool runs only when the host's `approval_response` allows it; denied, the
 * model reads that the user declined it and the host never gets the `tool_call`. With
 * `approvals: true` the runtime's own tools (Bash, ...) are asked too; without it they are denied
 * unasked. Every answer the sidecar cannot use gets a named error frame and loses nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime, type TurnScript } from "../../packages/toolrelay/src/testing/index.js";
import { inProcessSidecar, type AnyFrame, type FrameHost } from "./support/frame-host.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Heard {
  tool: string;
  toolReturn: string;
}

/**
 * The model: one directive per line of the user's message. `CALL <tool> <json>` calls a client
 * tool, `RUN <tool> <json>` one of the runtime's own (its output: `ran <tool>`). Every tool return
 * (what the model reads) is recorded.
 */
function approvalScript(heard: Heard[]): TurnScript {
  return async (turn) => {
    for (const line of turn.userText.split("\n")) {
      const [directive = "", tool = "", ...json] = line.trim().split(" ");
      const input = json.length > 0 ? (JSON.parse(json.join(" ")) as Record<string, unknown>) : {};
      if (turn.signal.aborted) return;
      const result =
        directive === "CALL"
          ? await turn.callTool(tool, input)
          : directive === "RUN"
            ? await turn.runBuiltinTool(tool, input, `ran ${tool}`, { stream: false })
            : undefined;
      if (result !== undefined) heard.push({ tool, toolReturn: result.toolReturn });
    }
    if (!turn.signal.aborted) await turn.say("done");
  };
}

async function setUp(): Promise<{ runtime: ScriptedRuntime; host: FrameHost; heard: Heard[] }> {
  const heard: Heard[] = [];
  const runtime = await startScriptedRuntime({ script: approvalScript(heard), heartbeatIntervalMs: 0 });
  const { sidecar, host } = inProcessSidecar();
  cleanups.push(() => runtime.close());
  cleanups.push(() => sidecar.stop());
  await host.greet();
  return { runtime, host, heard };
}

const deleteFile = {
  name: "delete_file",
  description: "Deletes a file of the host",
  input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  annotations: { destructiveHint: true },
  needs_approval: true,
};
const asks = { options: { approvals: true } };

/** Answer every tool_call with `deleted <path>`, recording the inputs. */
function answerDeletes(host: FrameHost): unknown[] {
  const inputs: unknown[] = [];
  host.answerCalls((call) => {
    inputs.push(call.input);
    return { type: "tool_result", content: [{ type: "text", text: `deleted ${String((call.input as { path?: unknown }).path)}` }] };
  });
  return inputs;
}

function sendTurn(host: FrameHost, session: string, turn: string, message: string): Promise<AnyFrame> {
  const from = host.frames.length;
  host.send({ type: "send", session, turn, message });
  return host.next({ type: "turn_end", session, turn }, { from });
}

describe("approvals over the sidecar protocol", () => {
  it("a needs_approval tool asks the host first and runs only when allowed; denied, the model reads the declined text and the host never gets the call", async () => {
    const { runtime, host, heard } = await setUp();
    await host.open("s", runtime.url, [deleteFile], asks);
    const inputs = answerDeletes(host);

    // Allowed: the approval_request comes first, then the tool_call.
    let from = host.frames.length;
    const allowed = sendTurn(host, "s", "t1", 'CALL delete_file {"path":"a.txt"}');
    const request = await host.next({ type: "approval_request" }, { from });
    expect(request).toEqual({
      type: "approval_request",
      session: "s",
      approval: expect.stringMatching(/^approval-\d+$/),
      turn: "t1",
      kind: "client_tool",
      tool: "delete_file",
      tool_call_id: expect.any(String),
      agent_id: expect.any(String),
      conversation_id: expect.any(String),
      input: { path: "a.txt" },
      annotations: { destructiveHint: true },
      idempotency_key: expect.stringMatching(/^tr1_[\w-]{43}$/),
      timeout_ms: 120_000,
    });
    expect(host.frames.slice(from).some((frame) => frame.type === "tool_call")).toBe(false);
    host.send({ type: "approval_response", session: "s", approval: request.approval, allow: true });
    expect(await allowed).toMatchObject({ fault: "ok", tool_calls: [{ tool: "delete_file", outcome: "ok", call: expect.any(String) }] });
    expect(inputs).toEqual([{ path: "a.txt" }]);
    expect(heard.at(-1)).toEqual({ tool: "delete_file", toolReturn: "deleted a.txt" });

    // Denied with the user's words: no tool_call, the model reads that the user declined it.
    from = host.frames.length;
    const denied = sendTurn(host, "s", "t2", 'CALL delete_file {"path":"b.txt"}');
    const second = await host.next({ type: "approval_request" }, { from });
    host.send({ type: "approval_response", session: "s", approval: second.approval, allow: false, message: "Not that one." });
    expect(await denied).toMatchObject({ fault: "ok", tool_calls: [{ call: null, tool: "delete_file", outcome: "denied" }] });
    expect(heard.at(-1)).toEqual({
      tool: "delete_file",
      toolReturn: "The user declined this call of tool delete_file; it was not run. The user said: Not that one.",
    });
    expect(host.frames.slice(from).some((frame) => frame.type === "tool_call")).toBe(false);
    expect(inputs).toEqual([{ path: "a.txt" }]);

    // Allowed with a replaced input: the host's tool gets that input.
    from = host.frames.length;
    const replaced = sendTurn(host, "s", "t3", 'CALL delete_file {"path":"c.txt"}');
    const third = await host.next({ type: "approval_request" }, { from });
    host.send({ type: "approval_response", session: "s", approval: third.approval, allow: true, updated_input: { path: "c.txt.bak" } });
    expect(await replaced).toMatchObject({ fault: "ok" });
    expect(inputs.at(-1)).toEqual({ path: "c.txt.bak" });
    expect(host.problems).toEqual([]);
  });

  it("with approvals: true the runtime's own tools are asked too; without it they are denied unasked", async () => {
    const { runtime, host, heard } = await setUp();
    await host.open("asks", runtime.url, [], asks);
    let from = host.frames.length;
    const allowed = sendTurn(host, "asks", "t1", 'RUN Bash {"command":"touch made.txt"}');
    const request = await host.next({ type: "approval_request" }, { from });
    expect(request).toMatchObject({
      kind: "runtime_tool",
      tool: "Bash",
      input: { command: "touch made.txt" },
      annotations: {},
      idempotency_key: null,
      turn: "t1",
    });
    host.send({ type: "approval_response", session: "asks", approval: request.approval, allow: true });
    expect(await allowed).toMatchObject({ fault: "ok" });
    expect(heard.at(-1)).toEqual({ tool: "Bash", toolReturn: "ran Bash" });

    from = host.frames.length;
    const denied = sendTurn(host, "asks", "t2", 'RUN Bash {"command":"rm -rf build"}');
    const second = await host.next({ type: "approval_request" }, { from });
    host.send({ type: "approval_response", session: "asks", approval: second.approval, allow: false });
    await denied;
    expect(heard.at(-1)!.toolReturn).toContain("The user denied permission for Bash; it was not run.");

    // A session whose host does not answer approvals: denied, and the host is never asked.
    await host.open("silent", runtime.url, []);
    from = host.frames.length;
    await sendTurn(host, "silent", "t3", 'RUN Bash {"command":"touch made.txt"}');
    expect(heard.at(-1)!.toolReturn).toContain("Permission for Bash was denied");
    expect(host.frames.slice(from).filter((frame) => frame.type === "approval_request")).toEqual([]);
    expect(host.problems).toEqual([]);
  });

  it("a needs_approval tool without approvals: true, and approvals on protocol version 1, are refused at open_session, naming the fields", async () => {
    const { runtime, host } = await setUp();
    const open = async (session: string, extra: Record<string, unknown>): Promise<AnyFrame> => {
      const from = host.frames.length;
      host.send({
        type: "open_session",
        session,
        backend: { kind: "local", url: runtime.url },
        agent: { id: "a" },
        tools: [deleteFile],
        ...extra,
      });
      return host.next({ type: "error", session }, { from });
    };
    expect(await open("no-approver", {})).toMatchObject({
      code: "invalid_options",
      frame_type: "open_session",
      message:
        'tools[0] "delete_file": "needs_approval": true needs a host that answers approvals; set "approvals": true in open_session\'s options and answer each approval_request with approval_response',
    });
    expect(await open("says-no", { options: { approvals: false } })).toMatchObject({ code: "invalid_options" });

    const { sidecar, host: oldHost } = inProcessSidecar();
    cleanups.push(() => sidecar.stop());
    expect(await oldHost.greet([1])).toMatchObject({ version: 1 });
    let from = oldHost.frames.length;
    oldHost.send({
      type: "open_session",
      session: "v1",
      backend: { kind: "local", url: runtime.url },
      agent: { id: "a" },
      tools: [deleteFile],
      options: { approvals: true },
    });
    expect(await oldHost.next({ type: "error", session: "v1" }, { from })).toMatchObject({
      code: "invalid_options",
      message:
        "options.approvals, tools[0].needs_approval: approvals need protocol version 2; this host and sidecar agreed on version 1 in hello/welcome",
    });
    // Version 1 without approvals still opens.
    from = oldHost.frames.length;
    await oldHost.open("v1-plain", runtime.url, [{ name: "echo", description: "Echoes", input_schema: { type: "object" } }]);
    expect(oldHost.frames.slice(from).map((frame) => frame.type)).toEqual(["session_opened"]);
  });

  it("answers it cannot use get named errors and lose nothing: no such approval, twice, another session's, a session not open, a bad shape", async () => {
    const { runtime, host, heard } = await setUp();
    await host.open("s", runtime.url, [deleteFile], asks);
    await host.open("other", runtime.url, [], asks);
    answerDeletes(host);
    const errorAfter = async (frame: object): Promise<AnyFrame> => {
      const from = host.frames.length;
      host.send(frame);
      return host.next({ type: "error" }, { from });
    };

    expect(await errorAfter({ type: "approval_response", session: "s", approval: "approval-404", allow: true })).toEqual({
      type: "error",
      code: "unknown_approval",
      message: "no approval approval-404 is waiting in session s",
      frame_type: "approval_response",
      session: "s",
      turn: null,
      call: null,
      approval: "approval-404",
    });

    let from = host.frames.length;
    const first = sendTurn(host, "s", "t1", 'CALL delete_file {"path":"a.txt"}');
    const request = await host.next({ type: "approval_request" }, { from });
    // Another open session's answer: refused, and the approval still waits for its own.
    expect(await errorAfter({ type: "approval_response", session: "other", approval: request.approval, allow: true })).toMatchObject({
      code: "unknown_approval",
      session: "other",
      approval: request.approval,
      message: `approval ${request.approval} is not of session other; answer it with the session of its approval_request`,
    });
    // A session that is not open.
    expect(await errorAfter({ type: "approval_response", session: "never", approval: request.approval, allow: true })).toMatchObject({
      code: "unknown_session",
      frame_type: "approval_response",
      session: "never",
      approval: request.approval,
      message: "session never is not open",
    });
    // Its own session's answer settles it.
    host.send({ type: "approval_response", session: "s", approval: request.approval, allow: false, message: "no" });
    expect(await first).toMatchObject({ fault: "ok", tool_calls: [{ outcome: "denied" }] });
    // Twice: the first answer stands.
    expect(await errorAfter({ type: "approval_response", session: "s", approval: request.approval, allow: true })).toMatchObject({
      code: "unknown_approval",
      message: `approval ${request.approval} of session s was answered already; the first answer stands`,
    });

    // A bad shape: invalid_frame naming each path; the waiting approval is denied at once (fail closed).
    from = host.frames.length;
    const second = sendTurn(host, "s", "t2", 'CALL delete_file {"path":"b.txt"}');
    const next = await host.next({ type: "approval_request" }, { from });
    expect(await errorAfter({ type: "approval_response", session: "s", approval: next.approval, allow: "yes" })).toMatchObject({
      code: "invalid_frame",
      frame_type: "approval_response",
      session: "s",
      approval: next.approval,
      message: expect.stringContaining("allow"),
    });
    expect(await second).toMatchObject({ fault: "ok", tool_calls: [{ outcome: "denied" }] });
    expect(heard.at(-1)!.toolReturn).toBe(
      "The user declined this call of tool delete_file; it was not run. The user said: the host's approval answer was invalid",
    );
    for (const [frame, path] of [
      [{ allow: true, message: "why" }, "message"],
      [{ allow: false, updated_input: { path: "x" } }, "updated_input"],
      [{ allow: true, updated_input: "x" }, "updated_input"],
      [{ allow: true, extra: 1 }, "extra"],
    ] as const) {
      expect(await errorAfter({ type: "approval_response", session: "s", approval: "approval-999", ...frame })).toMatchObject({
        code: "invalid_frame",
        message: expect.stringContaining(path),
      });
    }
    // Nothing was lost: the session still asks and runs.
    from = host.frames.length;
    const third = sendTurn(host, "s", "t3", 'CALL delete_file {"path":"c.txt"}');
    const last = await host.next({ type: "approval_request" }, { from });
    host.send({ type: "approval_response", session: "s", approval: last.approval, allow: true });
    expect(await third).toMatchObject({ fault: "ok", tool_calls: [{ outcome: "ok" }] });
    expect(heard.at(-1)).toEqual({ tool: "delete_file", toolReturn: "deleted c.txt" });
    expect(host.problems).toEqual([]);
  });

  it("an approval the host never answers ends at approval_timeout_ms: approval_cancel, the model reads that nobody answered, a late answer is ignored", async () => {
    const { runtime, host, heard } = await setUp();
    await host.open("s", runtime.url, [deleteFile], { options: { approvals: true, approval_timeout_ms: 1_000 } });
    const inputs = answerDeletes(host);
    const from = host.frames.length;
    const ended = sendTurn(host, "s", "t1", 'CALL delete_file {"path":"a.txt"}');
    const request = await host.next({ type: "approval_request" }, { from });
    expect(request.timeout_ms).toBe(1_000);
    const cancel = await host.next({ type: "approval_cancel" }, { from });
    expect(cancel).toEqual({
      type: "approval_cancel",
      session: "s",
      approval: request.approval,
      reason: "timeout",
      message: "The tool call was cancelled: the call was not approved (timeout)",
    });
    expect(await ended).toMatchObject({ fault: "ok", tool_calls: [{ outcome: "denied" }] });
    expect(heard.at(-1)!.toolReturn).toBe("Tool delete_file was not run: it needs the user's approval and nobody answered in time (1 s).");
    // Late: after approval_cancel an answer is ignored, without an error frame.
    const after = host.frames.length;
    host.send({ type: "approval_response", session: "s", approval: request.approval, allow: true });
    host.send({ type: "approval_response", session: "s", approval: "approval-404", allow: true });
    const error = await host.next({ type: "error" }, { from: after });
    expect(error).toMatchObject({ code: "unknown_approval", approval: "approval-404" });
    expect(inputs).toEqual([]);
    expect(host.problems).toEqual([]);
  });
});
