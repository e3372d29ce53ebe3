/**
 * The bridge's HTTP edge on a real loopback server, with the real `openai` client where a client
 * is involved: keys, origins, hosts, routes, body bounds, refused requests, options. None of these
 * reach an agent: the backend named here is never contacted (nothing listens at it).
 */
import { request as httpRequest } from "node:http";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOpenAiBridge, type OpenAiBridge, type OpenAiBridgeOptions } from "../../packages/toolrelay/src/openai/index.js";

const KEY = "edge-key";
const unreachable = { kind: "local" as const, url: "ws://127.0.0.1:9/ws" };
let bridge: OpenAiBridge;

beforeAll(async () => {
  bridge = await startOpenAiBridge({
    backend: unreachable,
    agent: { id: "agent-x" },
    apiKeys: [KEY],
    allowedOrigins: ["http://localhost:3000"],
    maxBodyBytes: 2_000,
  });
});
afterAll(() => bridge?.close());

/** A raw request (so that any header can be set, Host included). */
function raw(
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: "127.0.0.1", port: bridge.port, method, path, headers: { authorization: `Bearer ${KEY}`, ...options.headers } },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      },
    );
    request.on("error", reject);
    request.end(options.body);
  });
}

const chat = (body: unknown) =>
  raw("POST", "/v1/chat/completions", { headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

describe("the bridge's HTTP edge", () => {
  it("lists its one model to the openai client, and says which model is not there", async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: bridge.url, maxRetries: 0 });
    const models = await client.models.list();
    expect(models.data.map((model) => model.id)).toEqual(["letta-code"]);
    await expect(client.models.retrieve("letta-code")).resolves.toMatchObject({ id: "letta-code", object: "model" });
    await expect(client.models.retrieve("gpt-4o")).rejects.toMatchObject({ status: 404, code: "model_not_found" });
    await expect(client.chat.completions.create({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({
      status: 404,
      code: "model_not_found",
      message: expect.stringContaining('this bridge serves "letta-code"'),
    });
  });

  it("refuses a missing, malformed or wrong key with 401 and never echoes it", async () => {
    const wrong = new OpenAI({ apiKey: "not-the-key", baseURL: bridge.url, maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401, code: "invalid_api_key" });
    const missing = await raw("GET", "/v1/models", { headers: { authorization: "" } });
    expect(missing.status).toBe(401);
    const malformed = await raw("GET", "/v1/models", { headers: { authorization: "Basic abc" } });
    expect(JSON.parse(malformed.body)).toMatchObject({
      error: { code: "invalid_api_key", message: "malformed Authorization header (expected Bearer <key>)" },
    });
    expect(malformed.body).not.toContain("abc");
  });

  it("refuses browsers from other origins and foreign Host headers; answers an allowed origin's preflight", async () => {
    const foreign = await raw("GET", "/v1/models", { headers: { origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error.code).toBe("origin_not_allowed");
    const rebinding = await raw("GET", "/v1/models", { headers: { host: "evil.example:80" } });
    expect(rebinding.status).toBe(403);
    expect(JSON.parse(rebinding.body).error.code).toBe("host_not_allowed");
    const preflight = await raw("OPTIONS", "/v1/chat/completions", { headers: { origin: "http://localhost:3000", authorization: "" } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers["access-control-allow-origin"]).toBe("http://localhost:3000");
    const allowed = await raw("GET", "/v1/models", { headers: { origin: "http://localhost:3000" } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers["access-control-allow-origin"]).toBe("http://localhost:3000");
  });

  it("answers unknown routes, wrong methods, bodies too large and bodies that are not JSON with errors naming them", async () => {
    expect(JSON.parse((await raw("GET", "/v1/embeddings")).body).error.code).toBe("not_found");
    const get = await raw("GET", "/v1/chat/completions");
    expect([get.status, JSON.parse(get.body).error.code]).toEqual([405, "method_not_allowed"]);
    const large = await chat({ model: "letta-code", messages: [{ role: "user", content: "x".repeat(3_000) }] });
    expect([large.status, JSON.parse(large.body).error.code]).toEqual([413, "body_too_large"]);
    const notJson = await raw("POST", "/v1/chat/completions", { body: "{not json" });
    expect([notJson.status, JSON.parse(notJson.body).error.code]).toEqual([400, "invalid_json"]);
    const invalid = await chat({ model: "letta-code", messages: "hi" });
    expect(JSON.parse(invalid.body).error).toMatchObject({
      code: "invalid_request",
      message: "invalid request: messages: must be an array of messages",
    });
  });

  it("a request that ends with the assistant's message has nothing to answer (and opens no thread)", async () => {
    const answer = await chat({
      model: "letta-code",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
    });
    expect([answer.status, JSON.parse(answer.body).error.code]).toEqual([400, "nothing_to_answer"]);
    expect(bridge.threads()).toEqual([]);
  });

  it("a thread whose session cannot start: 502 upstream_error saying why", async () => {
    const answer = await chat({ model: "letta-code", messages: [{ role: "user", content: "hi" }] });
    expect(answer.status).toBe(502);
    expect(JSON.parse(answer.body).error).toMatchObject({
      type: "server_error",
      code: "upstream_error",
      message: expect.stringContaining("cannot start a conversation with the agent"),
    });
    expect(bridge.threads()).toEqual([]);
  });
});

describe("bridge options", () => {
  const base: OpenAiBridgeOptions = { backend: unreachable, agent: { id: "a" } };
  const cloud = { kind: "cloud" as const, apiKey: "k", environment: { connectionId: "c" } };
  it.each<[string, OpenAiBridgeOptions, RegExp]>([
    ["a non-loopback host without keys", { ...base, host: "0.0.0.0" }, /host 0\.0\.0\.0 is not a loopback address: give apiKeys/],
    [
      "an isolated workspace on a cloud backend",
      { ...base, backend: cloud, workspace: "isolated" },
      /"isolated" applies to a local backend only/,
    ],
    [
      "client-owned tools on a cloud backend without a workspace",
      { ...base, backend: cloud },
      /toolExecution "client" needs an empty workspace/,
    ],
    [
      "runtime-owned tools in the default mode with no canUseTool (every runtime call would be denied)",
      { ...base, toolExecution: "runtime" },
      /toolExecution "runtime" has the agent work with the runtime's own tools \(Bash, Read, Write, \.\.\.\), and the default mode \("strict"\) denies every call of them without a canUseTool: set session\.mode/,
    ],
    ["a result timeout past the runtime's 300 s", { ...base, toolResultTimeoutMs: 300_001 }, /toolResultTimeoutMs: must be at most 300000/],
    ["an unknown option", { ...base, maxThread: 3 } as OpenAiBridgeOptions, /"maxThread" is not an option/],
    [
      "a session option the bridge sets itself",
      { ...base, session: { tools: [] } as never },
      /options\.session\.tools is set by the bridge itself/,
    ],
    ["a bad backend (createSession's own check)", { ...base, backend: { kind: "local" } as never }, /needs exactly one of `url`/],
    [
      "a thread header that is not a header name",
      { ...base, threadKeys: { header: "x thread" } },
      /threadKeys\.header: must be a header name/,
    ],
  ])("refuses %s with INVALID_OPTIONS before anything starts", async (_name, options, message) => {
    await expect(startOpenAiBridge(options)).rejects.toMatchObject({ code: "INVALID_OPTIONS", message: expect.stringMatching(message) });
  });

  it("accepts runtime-owned tools once the mode or a canUseTool is named", async () => {
    for (const session of [
      { mode: "unrestricted" as const },
      { mode: "standard" as const },
      { canUseTool: () => ({ behavior: "allow" as const }) },
    ]) {
      const bridge = await startOpenAiBridge({ ...base, toolExecution: "runtime", session });
      await bridge.close();
    }
  });

  it("accepts any backend kind createSession accepts, with the workspace stated", async () => {
    const remote = await startOpenAiBridge({ ...base, backend: cloud, workspace: "runtime" });
    await remote.close();
  });
});
