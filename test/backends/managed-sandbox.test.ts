/**
 * The managed-sandbox lifecycle against the Letta REST routes (msw): both create routes, the TTL
 * refresh (after create, on a timer, before each turn), the wait for the listener, terminate, and
 * every failure each route can answer.
 */
import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createCloudBackend } from "../../packages/toolrelay/src/backends/cloud-backend.js";
import { resolveSandboxOptions, type CloudSandboxOptions } from "../../packages/toolrelay/src/backends/cloud-sandbox-options.js";
import { createLettaRestClient } from "../../packages/toolrelay/src/backends/letta-rest-client.js";
import { ManagedSandbox, type ManagedSandboxContext } from "../../packages/toolrelay/src/backends/managed-sandbox.js";
import type { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";

const baseUrl = "https://api.letta.test";
const key = "canary-sandbox-key-7f2a";
const commit = "0123456789abcdef0123456789abcdef01234567";

interface Seen {
  method: string;
  path: string;
  body: unknown;
  authorization: string | null;
  project: string | null;
}

const server = setupServer();
const seen: Seen[] = [];

beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => {
  server.resetHandlers();
  seen.length = 0;
});
afterAll(() => server.close());

async function record(request: Request): Promise<void> {
  const text = await request.clone().text();
  seen.push({
    method: request.method,
    path: new URL(request.url).pathname,
    body: text === "" ? undefined : JSON.parse(text),
    authorization: request.headers.get("authorization"),
    project: request.headers.get("x-project-id"),
  });
}

/** The rejection of `promise` (a test failure when it resolves). */
async function failure(promise: Promise<unknown>): Promise<ToolrelayError> {
  const outcome = await promise.then(
    () => undefined,
    (error: unknown) => error as ToolrelayError,
  );
  if (outcome === undefined) throw new Error("expected a rejection");
  return outcome;
}

const paths = () => seen.map((entry) => `${entry.method} ${entry.path}`);

interface FakeCloud {
  /** Listing answers, one per poll (the last repeats). */
  listings: Array<"not listed" | "offline" | "online">;
  create?: (request: Request) => Response | Promise<Response>;
  refresh?: () => Response;
  terminate?: () => Response;
}

/** A Cloud with one sandbox, `sb-1` on device `dev-1`, whose listener comes online per `listings`. */
function cloud(fake: FakeCloud) {
  let poll = 0;
  const answer = { sandboxId: "sb-1", deviceId: "dev-1", connectionName: "sandbox-sb-1", resumed: false };
  const create = async ({ request }: { request: Request }) => {
    await record(request);
    return fake.create ? fake.create(request) : HttpResponse.json(answer);
  };
  server.use(
    http.post(`${baseUrl}/v1/agents/:agentId/sandboxes`, create),
    http.post(`${baseUrl}/v1/sandboxes`, create),
    http.post(`${baseUrl}/v1/sandboxes/:id/refresh`, async ({ request }) => {
      await record(request);
      return fake.refresh ? fake.refresh() : HttpResponse.json({ success: true, sandboxId: "sb-1" });
    }),
    http.post(`${baseUrl}/v1/sandboxes/:id/terminate`, async ({ request }) => {
      await record(request);
      return fake.terminate ? fake.terminate() : HttpResponse.json({ success: true });
    }),
    http.get(`${baseUrl}/v1/environments`, async ({ request }) => {
      await record(request);
      const state = fake.listings[Math.min(poll++, fake.listings.length - 1)];
      const other = { id: "env-other", connectionId: "conn-other", deviceId: "dev-other", connectionName: "laptop", connectedAt: 9 };
      const mine = { id: "env-sb-1", deviceId: "dev-1", connectionName: "sandbox-sb-1" };
      const connections =
        state === "not listed"
          ? [other]
          : [other, { ...mine, connectionId: state === "online" ? "conn-sb-1" : null, connectedAt: state === "online" ? 10 : null }];
      return HttpResponse.json({ connections, hasNextPage: false });
    }),
  );
}

async function context(options: CloudSandboxOptions = {}, extra: Partial<ManagedSandboxContext> = {}) {
  const errors: ToolrelayError[] = [];
  const client = await createLettaRestClient({ apiKey: key, baseUrl, maxRetries: 0, headers: { "x-project-id": "p-1" } });
  const value: ManagedSandboxContext = {
    client,
    options: resolveSandboxOptions({ readyPollIntervalMs: 10, ...options }),
    agentId: "agent-1",
    conversationId: undefined,
    timers: systemTimers,
    onError: (error) => errors.push(error),
    ...extra,
  };
  return { value, errors };
}

const sandboxes: ManagedSandbox[] = [];
afterEach(async () => {
  for (const sandbox of sandboxes.splice(0)) await sandbox.close();
});

async function provision(options: CloudSandboxOptions = {}, extra: Partial<ManagedSandboxContext> = {}) {
  const { value, errors } = await context(options, extra);
  const result = await ManagedSandbox.provision(value);
  sandboxes.push(result.sandbox);
  return { ...result, errors };
}

describe("resolveSandboxOptions", () => {
  it("has the documented defaults; the refresh interval is 0.8 × TTL", () => {
    expect(resolveSandboxOptions({})).toEqual({
      createRoute: "agent",
      sandboxClass: undefined,
      githubRepositories: [],
      ttlMinutes: 5,
      readyTimeoutMs: 120_000,
      readyPollIntervalMs: 1_000,
      refreshIntervalMs: 240_000,
      terminateOnClose: false,
    });
    expect(resolveSandboxOptions({ ttlMinutes: 1 }).refreshIntervalMs).toBe(48_000);
    expect(resolveSandboxOptions({ ttlMinutes: 1, refreshIntervalMs: 5 }).refreshIntervalMs).toBe(5);
  });
});

describe("create, TTL and wait until online", () => {
  it('"agent" route: POST /v1/agents/{agentId}/sandboxes, refresh with the TTL, poll until the device is online', async () => {
    cloud({ listings: ["not listed", "offline", "online"] });
    const repositories = [{ owner: "letta-ai", repo: "letta-code", commit }];
    const { sandbox, connectionId } = await provision(
      { ttlMinutes: 7, sandboxClass: "container", githubRepositories: repositories },
      { conversationId: "conv-1" },
    );
    expect(connectionId).toBe("conn-sb-1");
    expect(sandbox.info).toMatchObject({ sandboxId: "sb-1", deviceId: "dev-1", connectionName: "sandbox-sb-1", resumed: false });
    expect(sandbox.info.readyAt).toBeGreaterThanOrEqual(sandbox.info.createdAt);
    expect(paths()).toEqual([
      "POST /v1/agents/agent-1/sandboxes",
      "POST /v1/sandboxes/sb-1/refresh",
      "GET /v1/environments",
      "GET /v1/environments",
      "GET /v1/environments",
      // Online: the TTL starts over.
      "POST /v1/sandboxes/sb-1/refresh",
    ]);
    expect(seen[0]!.body).toEqual({ conversationId: "conv-1", githubRepositories: repositories, sandboxClass: "container" });
    expect(seen[1]!.body).toEqual({ ttlMinutes: 7 });
    for (const entry of seen) {
      expect(entry.authorization).toBe(`Bearer ${key}`);
      expect(entry.project).toBe("p-1");
    }
  });

  it('"sandboxes" route: POST /v1/sandboxes with agentId in the body', async () => {
    cloud({ listings: ["online"] });
    await provision({ createRoute: "sandboxes" });
    expect(seen[0]).toMatchObject({ method: "POST", path: "/v1/sandboxes", body: { agentId: "agent-1" } });
  });

  it('"sandboxes" route without an agent: no agentId, and the create is sent once (no retries: it is not idempotent)', async () => {
    let creates = 0;
    cloud({
      listings: ["online"],
      create: () => {
        creates++;
        return new HttpResponse(null, { status: 503, headers: { "retry-after-ms": "5" } });
      },
    });
    const { value } = await context({ createRoute: "sandboxes" }, { agentId: undefined });
    value.client = await createLettaRestClient({ apiKey: key, baseUrl, maxRetries: 3 });
    await expect(ManagedSandbox.provision(value)).rejects.toMatchObject({ code: "REST_FAILED", details: { status: 503 } });
    expect(creates).toBe(1);
    expect(seen[0]!.body).toEqual({});
  });

  it("a resumed sandbox says so, and takes the conversation from the answer", async () => {
    cloud({
      listings: ["online"],
      create: () =>
        HttpResponse.json({ sandboxId: "sb-1", deviceId: "dev-1", connectionName: "c", conversationId: "conv-9", resumed: true }),
    });
    const { sandbox } = await provision();
    expect(sandbox.info.resumed).toBe(true);
    cloud({ listings: ["online"], refresh: () => HttpResponse.json({ error: "gone" }, { status: 404 }) });
    await expect(sandbox.beforeTurn()).rejects.toMatchObject({ code: "SANDBOX_EXPIRED", details: { conversationId: "conv-9" } });
  });

  it.each([
    [401, "UNAUTHORIZED"],
    [403, "UNAUTHORIZED"],
    [404, "NOT_FOUND"],
    [409, "REST_FAILED"],
    [500, "REST_FAILED"],
  ])("create answered HTTP %i → %s, without the key in the message, and nothing else is called", async (status, code) => {
    cloud({ listings: ["online"], create: () => HttpResponse.json({ detail: `bad key ${key}` }, { status }) });
    const error = await failure(provision());
    expect(error).toMatchObject({ code, details: { status } });
    expect(error.message).toContain("create a sandbox");
    expect(error.message).not.toContain(key);
    expect(paths()).toEqual(["POST /v1/agents/agent-1/sandboxes"]);
  });

  it("a create answer without sandboxId or deviceId → REST_FAILED naming the missing fields", async () => {
    cloud({ listings: ["online"], create: () => HttpResponse.json({ connectionName: "x", deviceId: "" }) });
    await expect(provision()).rejects.toMatchObject({ code: "REST_FAILED", details: { missing: ["sandboxId", "deviceId"] } });
  });

  it("a create that cannot reach the API → REST_FAILED", async () => {
    cloud({ listings: ["online"], create: () => HttpResponse.error() });
    await expect(provision()).rejects.toMatchObject({
      code: "REST_FAILED",
      message: expect.stringContaining("could not reach the Letta API"),
    });
  });

  it('"agent" route without an agent id is refused before any request', async () => {
    cloud({ listings: ["online"] });
    await expect(provision({}, { agentId: undefined })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("agent: { id }"),
    });
    expect(seen).toEqual([]);
  });

  it("the first refresh answered 404 (gone at once) → SANDBOX_EXPIRED; other refresh failures keep their codes", async () => {
    cloud({ listings: ["online"], refresh: () => HttpResponse.json({}, { status: 404 }) });
    await expect(provision({}, { conversationId: "conv-1" })).rejects.toMatchObject({
      code: "SANDBOX_EXPIRED",
      details: { sandboxId: "sb-1", conversationId: "conv-1" },
    });
    cloud({ listings: ["online"], refresh: () => HttpResponse.json({}, { status: 500 }) });
    await expect(provision()).rejects.toMatchObject({ code: "REST_FAILED", message: expect.stringContaining("refresh sandbox sb-1") });
    cloud({ listings: ["online"], refresh: () => HttpResponse.json({ success: false }) });
    await expect(provision()).rejects.toMatchObject({ code: "REST_FAILED", message: expect.stringContaining("success: false") });
  });

  it("never online → SANDBOX_NOT_READY saying how long it waited and what it saw; terminated only with terminateOnClose", async () => {
    cloud({ listings: ["not listed", "offline"] });
    const started = Date.now();
    const error = await failure(provision({ readyTimeoutMs: 150, readyPollIntervalMs: 20 }));
    expect(error).toMatchObject({
      code: "SANDBOX_NOT_READY",
      details: { sandboxId: "sb-1", deviceId: "dev-1", readyTimeoutMs: 150, lastState: "offline" },
    });
    expect(error.details!.waitedMs).toBeGreaterThanOrEqual(150);
    expect(error.message).toMatch(/did not come online within 150 ms \(waited \d+ ms; its device dev-1 was offline\)/);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(paths()).not.toContain("POST /v1/sandboxes/sb-1/terminate");

    seen.length = 0;
    cloud({ listings: ["not listed"] });
    await expect(provision({ readyTimeoutMs: 50, readyPollIntervalMs: 10, terminateOnClose: true })).rejects.toMatchObject({
      code: "SANDBOX_NOT_READY",
      details: { lastState: "not listed" },
    });
    expect(paths()).toContain("POST /v1/sandboxes/sb-1/terminate");
  });

  it("listing failures are retried until the deadline (the last one is the cause); a 401 stops the wait at once", async () => {
    let calls = 0;
    cloud({ listings: ["online"] });
    server.use(
      http.get(`${baseUrl}/v1/environments`, () =>
        ++calls < 3
          ? HttpResponse.json({}, { status: 502 })
          : HttpResponse.json({
              connections: [{ id: "e", deviceId: "dev-1", connectionName: "c", connectionId: "conn-sb-1", connectedAt: 1 }],
              hasNextPage: false,
            }),
      ),
    );
    await expect(provision()).resolves.toMatchObject({ connectionId: "conn-sb-1" });
    expect(calls).toBe(3);

    server.use(http.get(`${baseUrl}/v1/environments`, () => HttpResponse.json({}, { status: 500 })));
    await expect(provision({ readyTimeoutMs: 40, readyPollIntervalMs: 10 })).rejects.toMatchObject({
      code: "SANDBOX_NOT_READY",
      cause: expect.objectContaining({ code: "REST_FAILED" }),
      message: expect.stringContaining("listing failed"),
    });

    server.use(http.get(`${baseUrl}/v1/environments`, () => HttpResponse.json({}, { status: 401 })));
    const started = Date.now();
    await expect(provision({ readyTimeoutMs: 5_000 })).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("the session's signal stops the wait with ABORTED", async () => {
    cloud({ listings: ["offline"] });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 60);
    await expect(provision({ readyTimeoutMs: 10_000, readyPollIntervalMs: 20 }, { signal: controller.signal })).rejects.toMatchObject({
      code: "ABORTED",
    });
  });
});

describe("refresh while the session lives", () => {
  it("refreshes every refreshIntervalMs with the TTL", async () => {
    cloud({ listings: ["online"] });
    await provision({ ttlMinutes: 3, refreshIntervalMs: 25 });
    seen.length = 0;
    await expect
      .poll(() => paths().filter((entry) => entry === "POST /v1/sandboxes/sb-1/refresh").length, { timeout: 2_000 })
      .toBeGreaterThanOrEqual(3);
    expect(seen[0]!.body).toEqual({ ttlMinutes: 3 });
  });

  it("before each turn: one refresh (callers arriving together share it); a 404 → SANDBOX_EXPIRED naming the conversation, for good", async () => {
    cloud({ listings: ["online"] });
    const { sandbox } = await provision();
    sandbox.setRuntime("agent-1", "conv-2");
    seen.length = 0;
    await Promise.all([sandbox.beforeTurn(), sandbox.beforeTurn()]);
    expect(paths()).toEqual(["POST /v1/sandboxes/sb-1/refresh"]);
    cloud({ listings: ["online"], refresh: () => HttpResponse.json({ detail: "no such sandbox" }, { status: 404 }) });
    const error = await failure(sandbox.beforeTurn());
    expect(error).toMatchObject({ code: "SANDBOX_EXPIRED", details: { sandboxId: "sb-1", agentId: "agent-1", conversationId: "conv-2" } });
    expect(error.message).toContain('start a new session with conversation: "conv-2"');
    seen.length = 0;
    await expect(sandbox.beforeTurn()).rejects.toMatchObject({ code: "SANDBOX_EXPIRED" });
    expect(seen).toEqual([]);
  });

  it("a background refresh answered 404 marks the sandbox gone and stops the timer", async () => {
    cloud({ listings: ["online"] });
    const { sandbox } = await provision({ refreshIntervalMs: 20 });
    cloud({ listings: ["online"], refresh: () => HttpResponse.json({}, { status: 404 }) });
    await expect
      .poll(
        () =>
          sandbox.beforeTurn().then(
            () => "alive",
            (error: ToolrelayError) => error.code,
          ),
        { timeout: 2_000 },
      )
      .toBe("SANDBOX_EXPIRED");
    seen.length = 0;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(seen).toEqual([]);
  });

  it("any other refresh failure is reported as an error event and the turn goes on", async () => {
    cloud({ listings: ["online"] });
    const { sandbox, errors } = await provision();
    cloud({ listings: ["online"], refresh: () => HttpResponse.json({}, { status: 500 }) });
    await expect(sandbox.beforeTurn()).resolves.toBeUndefined();
    expect(errors).toEqual([expect.objectContaining({ code: "REST_FAILED", message: expect.stringContaining("refresh sandbox sb-1") })]);
  });
});

describe("close", () => {
  it("does not terminate by default (others may share the sandbox), and stops refreshing", async () => {
    cloud({ listings: ["online"] });
    const { sandbox } = await provision({ refreshIntervalMs: 20 });
    await sandbox.close();
    seen.length = 0;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(seen).toEqual([]);
  });

  it("terminates with terminateOnClose (POST /v1/sandboxes/{id}/terminate); a 404 there is fine, a 500 is reported", async () => {
    cloud({ listings: ["online"] });
    const first = await provision({ terminateOnClose: true });
    seen.length = 0;
    await first.sandbox.close();
    await first.sandbox.close();
    expect(paths()).toEqual(["POST /v1/sandboxes/sb-1/terminate"]);

    cloud({ listings: ["online"], terminate: () => HttpResponse.json({}, { status: 404 }) });
    const second = await provision({ terminateOnClose: true });
    await second.sandbox.close();
    expect(second.errors).toEqual([]);

    cloud({ listings: ["online"], terminate: () => HttpResponse.json({}, { status: 500 }) });
    const third = await provision({ terminateOnClose: true });
    await third.sandbox.close();
    expect(third.errors).toEqual([
      expect.objectContaining({ code: "REST_FAILED", message: expect.stringContaining("terminate sandbox sb-1") }),
    ]);
  });
});

describe("createCloudBackend", () => {
  it("builds the link for the sandbox's environment, with the session's agent and conversation", async () => {
    cloud({ listings: ["offline", "online"] });
    const backend = await createCloudBackend(
      { kind: "cloud", apiKey: key, baseUrl, sandbox: { readyPollIntervalMs: 10 }, restMaxRetries: 0 },
      { agentId: "agent-1", conversationId: "conv-3" },
    );
    expect(backend.link.connectionId).toBe("conn-sb-1");
    expect(backend.link.state).toBe("idle");
    expect(backend.sandbox?.info.sandboxId).toBe("sb-1");
    expect(seen[0]).toMatchObject({ path: "/v1/agents/agent-1/sandboxes", body: { conversationId: "conv-3" } });
    await backend.sandbox?.close();
    await backend.link.close();
  });

  it("an environment backend has no sandbox", async () => {
    const backend = await createCloudBackend({ kind: "cloud", apiKey: key, baseUrl, environment: { connectionId: "conn-x" } });
    expect(backend.sandbox).toBeUndefined();
    expect(backend.link.connectionId).toBe("conn-x");
    await backend.link.close();
  });
});
