/**
 * Frames the sidecar cannot use: each gets a named error frame and the
 * sidecar goes on (the same session keeps working after every one of them).
 * Also: hello first, version negotiation, open_session's named errors,
 * MessagePack, and the host's disappearance.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { frameBytes } from "../../packages/toolrelay/src/sidecar/frame-reader.js";
import { sidecarProtocolSchemas, type Sidecar } from "../../packages/toolrelay/src/sidecar/index.js";
import { directiveScript } from "../fixtures/sidecar/directive-script.js";
import { inProcessSidecar, type AnyFrame, type FrameHost } from "./support/frame-host.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const echo = { name: "echo", description: "Echoes its input", input_schema: { type: "object" } };

async function runtimeAndHost(
  options: Parameters<typeof inProcessSidecar>[0] = {},
): Promise<{ runtime: ScriptedRuntime; host: FrameHost; sidecar: Sidecar }> {
  let runtime: ScriptedRuntime | undefined;
  runtime = await startScriptedRuntime({ script: directiveScript(() => runtime), heartbeatIntervalMs: 0 });
  const { sidecar, host } = inProcessSidecar(options);
  cleanups.push(() => runtime!.close());
  cleanups.push(() => sidecar.stop());
  return { runtime, host, sidecar };
}

async function errorAfter(host: FrameHost, act: () => void): Promise<AnyFrame> {
  const from = host.frames.length;
  act();
  return host.next({ type: "error" }, { from });
}

async function echoTurn(host: FrameHost, turn: string): Promise<AnyFrame> {
  const from = host.frames.length;
  host.send({ type: "send", session: "s", turn, message: 'CALL echo {"n":1}' });
  return host.next({ type: "turn_end", turn }, { from });
}

describe("frames the sidecar cannot use", () => {
  it("answers each with a named error and the session goes on working", async () => {
    const { runtime, host } = await runtimeAndHost({ maxFrameBytes: 4_096 });
    await host.greet();
    await host.open("s", runtime.url, [echo]);
    host.answerCalls((call) => ({ type: "tool_result", content: [{ type: "text", text: JSON.stringify(call.input) }] }));
    const cases: Array<[string, () => void, Partial<AnyFrame>]> = [
      ["not JSON", () => host.sendRaw(frameBytes(Buffer.from("{nope"))), { code: "malformed_frame" }],
      ["not UTF-8", () => host.sendRaw(frameBytes(Uint8Array.of(0x7b, 0xff, 0x7d))), { code: "malformed_frame" }],
      ["an empty body", () => host.sendRaw(frameBytes(new Uint8Array())), { code: "malformed_frame" }],
      ["a JSON array", () => host.sendRaw(frameBytes(Buffer.from("[1,2]"))), { code: "malformed_frame" }],
      [
        "nested 1,000 levels",
        () => host.sendRaw(frameBytes(Buffer.from(`${"[".repeat(1_000)}${"]".repeat(1_000)}`))),
        { code: "malformed_frame" },
      ],
      ["over the frame limit", () => host.sendRaw(frameBytes(Buffer.alloc(5_000, 0x20))), { code: "frame_too_large" }],
      ["an unknown type", () => host.send({ type: "launch_rockets", session: "s" }), { code: "unknown_frame_type", session: "s" }],
      [
        "a typo in a field",
        () => host.send({ type: "send", session: "s", turn: "x", mesage: "hi" }),
        { code: "invalid_frame", frame_type: "send" },
      ],
      ["a second hello", () => host.send({ type: "hello", versions: [1] }), { code: "hello_repeated" }],
      [
        "an image by URL",
        () =>
          host.send({
            type: "send",
            session: "s",
            turn: "x",
            message: [{ type: "image", source: { type: "url", url: "https://a/b.png" } }],
          }),
        { code: "invalid_frame", frame_type: "send", message: expect.stringContaining("message[0].source.type") },
      ],
      [
        "an image as a data: URL",
        () =>
          host.send({
            type: "send",
            session: "s",
            turn: "x",
            message: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "data:image/png;base64,iVBORw0KGgo=" } }],
          }),
        { code: "invalid_frame", message: expect.stringContaining("without a data: prefix") },
      ],
      [
        "an image of a type the runtime does not take",
        () =>
          host.send({
            type: "send",
            session: "s",
            turn: "x",
            message: [{ type: "image", source: { type: "base64", media_type: "image/bmp", data: "Qk0=" } }],
          }),
        { code: "invalid_frame", message: expect.stringContaining("message[0].source.media_type") },
      ],
      [
        "an answer to no call",
        () => host.send({ type: "tool_result", session: "s", call: "call-999", content: [] }),
        { code: "unknown_call", call: "call-999" },
      ],
      ["an unknown session", () => host.send({ type: "abort", session: "nope" }), { code: "unknown_session", session: "nope" }],
      [
        "an answer in a session that is not open",
        () => host.send({ type: "tool_error", session: "nope", call: "call-999", message: "x" }),
        { code: "unknown_session", session: "nope", call: "call-999" },
      ],
      [
        "a session opened twice",
        () => host.send({ type: "open_session", session: "s", backend: { kind: "local", url: runtime.url }, agent: { id: "a" } }),
        { code: "session_exists" },
      ],
    ];
    let turn = 0;
    for (const [what, act, expected] of cases) {
      expect(await errorAfter(host, act), what).toMatchObject(expected);
      expect(await echoTurn(host, `t${++turn}`), `after ${what}`).toMatchObject({ fault: "ok", text: 'done: {"n":1}' });
    }
  });

  it("a header split across writes and frames glued together are read as frames", async () => {
    const { runtime, host } = await runtimeAndHost();
    const hello = frameBytes(Buffer.from(JSON.stringify({ type: "hello", versions: [1] })));
    for (const byte of hello) host.sendRaw(Uint8Array.of(byte));
    await host.next({ type: "welcome" });
    const open = frameBytes(
      Buffer.from(
        JSON.stringify({
          type: "open_session",
          session: "s",
          backend: { kind: "local", url: runtime.url },
          agent: { id: "a" },
          tools: [echo],
        }),
      ),
    );
    const bad = frameBytes(Buffer.from("x"));
    host.sendRaw(Buffer.concat([bad, open]));
    await host.next({ type: "session_opened", session: "s" });
    expect(host.frames.filter((frame) => frame.type === "error")).toHaveLength(1);
  });

  it("an invalid tool_result for a waiting call is reported to the host and reaches the model as a tool error (nothing hangs)", async () => {
    const { runtime, host } = await runtimeAndHost();
    await host.greet();
    await host.open("s", runtime.url, [echo]);
    host.answerCalls(() => ({ type: "tool_result", content: [{ type: "video", url: "x" }] }));
    const end = await echoTurn(host, "t1");
    expect(host.frames.find((frame) => frame.type === "error")).toMatchObject({
      code: "invalid_frame",
      frame_type: "tool_result",
      session: "s",
    });
    expect(end).toMatchObject({ fault: "tool_error", text: expect.stringContaining("the host sent an invalid tool_result") });
  });
});

describe("hello and open_session", () => {
  it("wants hello first, and a version it speaks", async () => {
    const { runtime, host } = await runtimeAndHost();
    expect(
      await errorAfter(host, () =>
        host.send({ type: "open_session", session: "s", backend: { kind: "local", url: runtime.url }, agent: { id: "a" } }),
      ),
    ).toMatchObject({
      code: "hello_required",
      session: "s",
    });
    // Its fields are not looked at before hello: the order is wrong first.
    expect(await errorAfter(host, () => host.send({ type: "open_session", session: "s", backend: {}, tols: [] }))).toMatchObject({
      code: "hello_required",
      frame_type: "open_session",
    });
    expect(await errorAfter(host, () => host.send({ type: "hello", versions: [3, 4] }))).toMatchObject({
      code: "unsupported_version",
      message: "this sidecar speaks protocol versions 1, 2; the host offered 3, 4",
    });
    // The highest version both speak.
    const welcome = await host.greet([1, 2, 3]);
    expect(welcome).toEqual({
      type: "welcome",
      version: 2,
      sidecar: { name: "toolrelay-sidecar", version: expect.any(String) },
      encoding: "json",
      max_frame_bytes: 16 * 1024 * 1024,
    });
  });

  it("names why a session could not open", async () => {
    const { runtime, host } = await runtimeAndHost();
    await host.greet();
    const open = (session: string, extra: Record<string, unknown>) =>
      errorAfter(host, () =>
        host.send({ type: "open_session", session, backend: { kind: "local", url: runtime.url }, agent: { id: "a" }, ...extra }),
      );
    expect(await open("bad-name", { tools: [{ ...echo, name: "no spaces allowed" }] })).toMatchObject({
      code: "invalid_tool_definition",
      session: "bad-name",
    });
    expect(await open("bad-schema", { tools: [{ ...echo, input_schema: { type: "string" } }] })).toMatchObject({
      code: "invalid_tool_definition",
    });
    expect(await open("long-timeout", { tools: [{ ...echo, timeout_ms: 600_000 }] })).toMatchObject({
      code: "invalid_tool_definition",
      message: expect.stringContaining("300"),
    });
    expect(await open("twice", { tools: [echo, echo] })).toMatchObject({ code: "duplicate_tool_name" });
    expect(await open("big-input", { options: { max_input_bytes: 100_000_000 } })).toMatchObject({
      code: "invalid_options",
      message: expect.stringContaining("max_input_bytes"),
    });
    expect(await open("refused", { backend: { kind: "local", url: "ws://127.0.0.1:1/ws" } })).toMatchObject({
      code: "connect_failed",
      session: "refused",
    });
    // A cloud backend must be handed its key: the sidecar reads none from its environment.
    expect(await open("cloud", { backend: { kind: "cloud", environment: { name: "x" } } })).toMatchObject({
      code: "invalid_frame",
      message: expect.stringContaining("api_key"),
    });
  });
});

describe("MessagePack", () => {
  it("runs a whole session with MessagePack bodies", async () => {
    const { runtime, host } = await runtimeAndHost({ encoding: "msgpack" });
    expect(await host.greet()).toMatchObject({ encoding: "msgpack" });
    await host.open("s", runtime.url, [echo]);
    host.answerCalls((call) => ({ type: "tool_result", content: [{ type: "text", text: JSON.stringify(call.input) }] }));
    expect(await echoTurn(host, "t1")).toMatchObject({ fault: "ok", text: 'done: {"n":1}' });
    expect(host.problems).toEqual([]);
    // JSON is not MessagePack: a JSON body is a malformed frame here.
    expect(await errorAfter(host, () => host.sendRaw(frameBytes(Buffer.from('{"type":"shutdown"}'))))).toMatchObject({
      code: "malformed_frame",
    });
  });
});

describe("the host goes away", () => {
  it("its input's end answers the runtime's pending call as cancelled at once and stops the sidecar", async () => {
    const { runtime, host, sidecar } = await runtimeAndHost();
    await host.greet();
    await host.open("s", runtime.url, [echo]);
    host.send({ type: "send", session: "s", turn: "t1", message: 'CALL echo {"n":1}' });
    await host.next({ type: "tool_call" });
    host.endInput();
    await expect.poll(() => runtime.calls[0]?.status, { timeout: 2_000 }).toBe("answered");
    expect(runtime.calls[0]!.response).toMatchObject({ error: expect.stringContaining("cancelled") });
    await expect(sidecar.done).resolves.toEqual({ reason: "host_gone" });
  });

  it("shutdown closes every session, answers goodbye and ends the output", async () => {
    const { runtime, host } = await runtimeAndHost();
    await host.greet();
    await host.open("a", runtime.url, [echo]);
    await host.open("b", runtime.url, [echo]);
    host.send({ type: "shutdown" });
    await host.next({ type: "goodbye" });
    await expect.poll(() => host.ended).toBe(true);
    const closed = host.frames.filter((frame) => frame.type === "session_closed").map((frame) => [frame.session, frame.reason]);
    expect(closed.sort()).toEqual([
      ["a", "shutdown"],
      ["b", "shutdown"],
    ]);
    expect(host.frames.at(-1)).toEqual({ type: "goodbye" });
  });
});

describe("every frame the sidecar wrote matches its published schema", () => {
  it("checks this file's frames against the JSON Schemas (ajv)", async () => {
    const { Ajv2020 } = await import("ajv/dist/2020.js");
    const ajv = new Ajv2020({ strict: false });
    const schemas = sidecarProtocolSchemas().sidecar as Record<string, object>;
    const { runtime, host } = await runtimeAndHost();
    await host.greet();
    await host.open("s", runtime.url, [echo]);
    host.answerCalls(() => ({ type: "tool_result", content: [{ type: "text", text: "x" }] }));
    await echoTurn(host, "t1");
    host.send({ type: "nope" });
    host.send({ type: "shutdown" });
    await host.next({ type: "goodbye" });
    for (const frame of host.frames) {
      const validate = ajv.compile(schemas[frame.type]!);
      expect(validate(frame), `${frame.type}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });
});
