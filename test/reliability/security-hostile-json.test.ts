/**
 * Hostile JSON through a real session socket: a hostile app-server (raw `ws`
 * server, support-security/hostile-runtime.ts) writes to a real session
 * (createSession over the local link, no mocks):
 * - documents 10,000 levels deep (as frames, and as a tool call's input);
 * - `__proto__` / `constructor.prototype` keys at any depth of tool inputs,
 *   against every kind of zod object schema;
 * - 10,000 fast-check JSON values (keys biased towards `__proto__`,
 *   `constructor`, `prototype`, ...) as frames, and 10,000 as tool inputs.
 * Nothing crashes, the socket stays open, every answer that is due arrives
 * within 500 ms, what a tool receives is plain data, and the built-in
 * prototypes are unchanged afterwards.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { WebSocket } from "ws";
import { createSession, defineTool, type Session } from "../../packages/toolrelay/src/index.js";
import { startRelay } from "../../packages/relay/src/index.js";
import { startScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { HOSTILE_AGENT_ID, HOSTILE_RUNTIME, HostileRuntime } from "./support-security/hostile-runtime.js";
import { plainDataViolations, prototypeChanges, snapshotPrototypes } from "./support-security/plain-data.js";
import { SingleSocketListener } from "./support-security/relay-listener.js";

const ANSWER_DEADLINE_MS = 500;
const GENERATED = 10_000;
const SEED = Number(process.env.TOOLRELAY_SECURITY_SEED ?? 4_242);

let runtime: HostileRuntime;
let session: Session;
const prototypesBefore = snapshotPrototypes();
const sessionErrors: string[] = [];
/** What each tool saw that was not plain data, by tool name. */
const impurities: string[] = [];
let nextId = 0;

/** `execute` for every probe tool: report what arrived, never throw. */
function inspect(name: string) {
  return (input: unknown): string => {
    const violations = plainDataViolations(input);
    if (violations.length > 0) impurities.push(`${name}: ${violations.join("; ")}`);
    const smuggled = (input as Record<string, unknown>).force;
    return `ran ${name}; force=${String(smuggled)}; violations=${violations.length}`;
  };
}

const probeTools = [
  defineTool({
    name: "strip",
    description: "z.object (unknown keys stripped)",
    inputSchema: z.object({ force: z.boolean().optional(), value: z.unknown().optional() }),
    execute: inspect("strip"),
  }),
  defineTool({
    name: "loose",
    description: "z.looseObject",
    inputSchema: z.looseObject({ force: z.boolean().optional() }),
    execute: inspect("loose"),
  }),
  defineTool({
    name: "catchall",
    description: "z.object().catchall()",
    inputSchema: z.object({ force: z.boolean().optional() }).catchall(z.unknown()),
    execute: inspect("catchall"),
  }),
  defineTool({
    name: "strict",
    description: "z.strictObject",
    inputSchema: z.strictObject({ force: z.boolean().optional(), value: z.unknown().optional() }),
    execute: inspect("strict"),
  }),
  defineTool({
    name: "nested",
    description: "z.object with a nested loose object",
    inputSchema: z.object({ a: z.looseObject({ b: z.string().optional() }) }),
    execute: inspect("nested"),
  }),
  defineTool({
    name: "required",
    description: "a.b required",
    inputSchema: z.object({ a: z.object({ b: z.string() }) }),
    execute: inspect("required"),
  }),
];

beforeAll(async () => {
  runtime = await HostileRuntime.start();
  session = await createSession({
    backend: { kind: "local", url: runtime.url, pingIntervalMs: 0, reconnect: false },
    agent: { id: HOSTILE_AGENT_ID },
    tools: probeTools,
  });
  session.on("error", (error) => sessionErrors.push(error.message));
});

afterAll(async () => {
  await session?.close();
  await runtime?.close();
});

/**
 * Send one tool call with `inputJson` verbatim; resolve with its response (undefined when none came
 * within `waitMs`) and the latency. Callers assert the latency against {@link ANSWER_DEADLINE_MS}.
 */
async function call(
  toolName: string,
  inputJson: string,
  waitMs = ANSWER_DEADLINE_MS,
): Promise<{ response: Record<string, unknown> | undefined; ms: number }> {
  const requestId = `hostile-${nextId++}`;
  const sent = performance.now();
  runtime.sendToolCall(requestId, toolName, inputJson);
  const response = await runtime.response(requestId, waitMs);
  return { response, ms: performance.now() - sent };
}

function responseText(response: Record<string, unknown> | undefined): string {
  if (response === undefined) return "(no answer)";
  if (typeof response.error === "string") return response.error;
  const result = response.result as { content?: Array<{ text?: string }> } | undefined;
  return result?.content?.map((block) => block.text ?? "").join("") ?? "";
}

/** The link is still up and a normal call is answered within the deadline. */
async function expectResponsive(): Promise<void> {
  expect(runtime.closeCodes, "the SDK closed its socket").toEqual([]);
  const { response } = await call("strip", '{"force":false}');
  expect(responseText(response)).toContain("ran strip");
}

const deep = (levels: number, open: string, close: string, core = ""): string => open.repeat(levels) + core + close.repeat(levels);

describe("10,000 levels deep", () => {
  it("frames nested 10,000 levels (arrays, objects, inside a known frame, unbalanced) neither crash nor stall the session", async () => {
    const frames = [
      deep(10_000, "[", "]"),
      deep(10_000, '{"a":', "}", "1"),
      `{"type":"stream_delta","runtime":${JSON.stringify(HOSTILE_RUNTIME)},"delta":${deep(10_000, '{"x":', "}", "null")}}`,
      `{"type":"control_request","request_id":"deep","request":${deep(10_000, "[", "]")}}`,
      "[".repeat(10_000),
      `"${"[".repeat(10_000)}"`,
    ];
    for (const frame of frames) {
      runtime.sendText(frame);
      await expectResponsive();
    }
    expect(session.state).toBe("open");
  });

  it("a tool call whose input is 10,000 levels deep, or not an object, still gets an error answer within 500 ms (P1)", async () => {
    const inputs: Array<[string, string]> = [
      ["10,000-deep arrays", `{"value":${deep(10_000, "[", "]")}}`],
      ["10,000-deep objects", deep(10_000, '{"value":', "}", "1")],
      ["a number", "7"],
      ["null", "null"],
      ["an array", '[{"force":true}]'],
    ];
    const unanswered: string[] = [];
    for (const [name, input] of inputs) {
      const { response } = await call("strip", input);
      if (response === undefined) unanswered.push(name);
      else expect(response.error ?? (response.result as { is_error?: boolean }).is_error, name).toBeTruthy();
    }
    await expectResponsive();
    expect(unanswered, "tool call requests left without any answer (the runtime waits 5 min for them)").toEqual([]);
  });

  it("an input just under the depth cap (250 levels) is answered within 500 ms", async () => {
    const { response, ms } = await call("strip", `{"value":${deep(250, "[", "]")}}`);
    expect(responseText(response)).toContain("ran strip");
    expect(ms).toBeLessThan(ANSWER_DEADLINE_MS);
  });
});

describe("__proto__ and constructor.prototype keys", () => {
  const payloads: Array<[string, string]> = [
    ["__proto__ at the root", '{"__proto__":{"force":"smuggled","polluted":true}}'],
    ["__proto__ with a declared key beside it", '{"force":false,"__proto__":{"force":"smuggled"}}'],
    ["constructor.prototype at the root", '{"constructor":{"prototype":{"force":"smuggled","polluted":true}}}'],
    ["__proto__ one level down", '{"a":{"__proto__":{"b":"smuggled","polluted":true}},"value":{"__proto__":{"polluted":true}}}'],
    ["__proto__ inside an array", '{"value":[{"__proto__":{"polluted":true}},{"constructor":{"prototype":{"polluted":true}}}]}'],
    ["__proto__ 50 levels down", `{"value":${deep(50, '{"__proto__":', "}", '{"polluted":true}')}}`],
    ["__proto__ as a string and a number", '{"__proto__":"x","constructor":1,"prototype":null}'],
  ];

  it("reach each tool's zod schema as plain data: the tool gets plain objects or the call is refused, and Object.prototype is untouched", async () => {
    const failures: string[] = [];
    for (const tool of probeTools) {
      for (const [name, json] of payloads) {
        const before = impurities.length;
        const { response, ms } = await call(tool.name, json);
        const text = responseText(response);
        if (response === undefined) failures.push(`${tool.name} / ${name}: no answer within ${ANSWER_DEADLINE_MS} ms`);
        else if (ms >= ANSWER_DEADLINE_MS) failures.push(`${tool.name} / ${name}: answered after ${Math.round(ms)} ms`);
        if (text.includes("force=smuggled"))
          failures.push(`${tool.name} / ${name}: a __proto__ value reached the tool as a declared field`);
        if (impurities.length > before) failures.push(`${tool.name} / ${name}: ${impurities.slice(before).join(" | ")}`);
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(prototypeChanges(prototypesBefore)).toEqual([]);
    expect(failures).toEqual([]);
  });

  it("a required field supplied only through __proto__ fails validation: the tool never runs", async () => {
    for (const json of ['{"a":{"__proto__":{"b":"smuggled"}}}', '{"a":{"constructor":{"prototype":{"b":"smuggled"}}}}']) {
      const { response } = await call("required", json);
      expect(responseText(response)).toContain("Error: invalid input for tool required");
    }
  });
});

/** JSON values whose object keys lean towards the dangerous ones; `__proto__` keys are real own keys. */
function hostileJson(): fc.Arbitrary<unknown> {
  const key = fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength: 6 }) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "__proto__",
        "constructor",
        "prototype",
        "toString",
        "valueOf",
        "hasOwnProperty",
        "then",
        "type",
        "request_id",
        "seq",
      ),
    },
  );
  const { value } = fc.letrec<{ value: unknown; array: unknown[]; object: Record<string, unknown> }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.string({ unit: "binary", maxLength: 12 }),
      tie("array"),
      tie("object"),
    ),
    array: fc.array(tie("value"), { maxLength: 5 }),
    object: fc.array(fc.tuple(key, tie("value")), { maxLength: 6 }).map((entries) => {
      const object: Record<string, unknown> = {};
      for (const [name, item] of entries)
        Object.defineProperty(object, name, { value: item, enumerable: true, writable: true, configurable: true });
      return object;
    }),
  }));
  return value;
}

const INBOUND_TYPES = [
  "external_tool_call_request",
  "control_request",
  "stream_delta",
  "turn_finished",
  "runtime_start_response",
  "update_queue",
  "update_loop_status",
  "sync_response",
  "pong",
] as const;

describe(`${GENERATED.toLocaleString("en")} fast-check JSON values (seed ${SEED})`, () => {
  it("as frames (raw, and dressed as known frame types): no crash, socket open, session still answers within 500 ms", async () => {
    const values = fc.sample(hostileJson(), { numRuns: GENERATED, seed: SEED });
    for (let index = 0; index < values.length; index++) {
      const value = values[index];
      let text = JSON.stringify(value);
      if (index % 2 === 1 && typeof value === "object" && value !== null && !Array.isArray(value)) {
        const dressed = {
          ...Object.fromEntries(Object.entries(value)),
          type: INBOUND_TYPES[index % INBOUND_TYPES.length],
          runtime: HOSTILE_RUNTIME,
        };
        text = JSON.stringify(dressed);
      }
      runtime.sendText(text);
      if (index % 1_000 === 999) await expectResponsive();
    }
    await expectResponsive();
    expect(session.state).toBe("open");
    expect(prototypeChanges(prototypesBefore)).toEqual([]);
  });

  it("as tool inputs: every call answered within 500 ms, the tool sees plain data, Object.prototype unchanged", async () => {
    const values = fc.sample(hostileJson(), { numRuns: GENERATED, seed: SEED + 1 });
    const impuritiesBefore = impurities.length;
    const late: string[] = [];
    let slowest = 0;
    // 10 calls in flight at a time (a model's parallel tool calls); each must be answered within 500 ms.
    for (let start = 0; start < values.length; start += 10) {
      const batch = values.slice(start, start + 10).map((value, offset) => {
        const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
        // Objects go in as the input itself on every other call (root-level hostile keys); everything else under `value`.
        const input = isObject && (start + offset) % 2 === 0 ? JSON.stringify(value) : JSON.stringify({ value });
        return call("strip", input, 5_000).then(({ response, ms }) => {
          slowest = Math.max(slowest, ms);
          if (response === undefined || ms >= ANSWER_DEADLINE_MS)
            late.push(`#${start + offset}: ${response === undefined ? "no answer within 5 s" : `answered after ${Math.round(ms)} ms`}`);
        });
      });
      await Promise.all(batch);
    }
    console.log(`hostile tool inputs: ${values.length} calls answered, slowest ${Math.round(slowest)} ms`);
    expect(late.slice(0, 10)).toEqual([]);
    expect(impurities.slice(impuritiesBefore, impuritiesBefore + 5)).toEqual([]);
    expect(prototypeChanges(prototypesBefore)).toEqual([]);
    await expectResponsive();
  }, 120_000);
});

/** A ws client that can wait for the next frame matching a predicate. */
async function probeClient(url: string): Promise<{
  socket: WebSocket;
  closed: () => boolean;
  answer(text: string, match: (frame: Record<string, unknown>) => boolean): Promise<number>;
}> {
  const socket = new WebSocket(url);
  socket.on("error", () => undefined);
  let closed = false;
  socket.on("close", () => (closed = true));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("probe socket not open within 3 s")), 3_000);
    socket.once("open", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  return {
    socket,
    closed: () => closed,
    answer(text, match) {
      const sent = performance.now();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          socket.off("message", onMessage);
          reject(new Error(`no answer to ${text} within ${ANSWER_DEADLINE_MS} ms`));
        }, ANSWER_DEADLINE_MS);
        const onMessage = (data: Buffer): void => {
          let frame: Record<string, unknown>;
          try {
            frame = JSON.parse(data.toString()) as Record<string, unknown>;
          } catch {
            return;
          }
          if (!match(frame)) return;
          clearTimeout(timer);
          socket.off("message", onMessage);
          resolve(performance.now() - sent);
        };
        socket.on("message", onMessage);
        socket.send(text);
      });
    },
  };
}

describe("the servers we ship take the same hostile JSON", () => {
  const hostileFrames = (seed: number): string[] => [
    deep(10_000, "[", "]"),
    deep(10_000, '{"type":', "}", '"x"'),
    `{"type":"runtime_start","request_id":"deep","external_tools":${deep(10_000, "[", "]")}}`,
    '{"type":"input","__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}',
    ...fc.sample(hostileJson(), { numRuns: GENERATED, seed }).map((value) => JSON.stringify(value)),
  ];

  it("scripted runtime: no crash, socket open, app_server_info answered within 500 ms after every 1,000 frames", async () => {
    const server = await startScriptedRuntime({ script: () => undefined, heartbeatIntervalMs: 0 });
    const client = await probeClient(server.url);
    try {
      const frames = hostileFrames(SEED + 2);
      for (let index = 0; index < frames.length; index++) {
        client.socket.send(frames[index]!);
        if (index % 1_000 === 999 || index === frames.length - 1) {
          const id = `info-${index}`;
          await client.answer(JSON.stringify({ type: "app_server_info", request_id: id }), (frame) => frame.request_id === id);
        }
      }
      expect(client.closed()).toBe(false);
      expect(prototypeChanges(prototypesBefore)).toEqual([]);
    } finally {
      client.socket.terminate();
      await server.close();
    }
  }, 60_000);

  it("relay: no crash, SDK socket open, ping answered within 500 ms after every 1,000 frames", async () => {
    const relay = await startRelay({ listenerMode: "single", heartbeatIntervalMs: 0 });
    const listener = await SingleSocketListener.start(relay.httpUrl, undefined);
    const client = await probeClient(relay.statusUrl(listener.environment.connectionId, { channel: "control", sessionId: "hostile" }));
    try {
      const frames = hostileFrames(SEED + 3);
      for (let index = 0; index < frames.length; index++) {
        client.socket.send(frames[index]!);
        if (index % 1_000 === 999 || index === frames.length - 1) await client.answer('{"type":"ping"}', (frame) => frame.type === "pong");
      }
      expect(client.closed()).toBe(false);
      expect(listener.socket?.readyState).toBe(WebSocket.OPEN);
      expect(prototypeChanges(prototypesBefore)).toEqual([]);
    } finally {
      client.socket.terminate();
      listener.terminate();
      await relay.close();
    }
  }, 60_000);
});
