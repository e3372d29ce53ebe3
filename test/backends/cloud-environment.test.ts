import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createCloudLink } from "../../packages/toolrelay/src/backends/cloud-backend.js";
import { resolveCloudEnvironment } from "../../packages/toolrelay/src/backends/cloud-environment.js";
import { createLettaRestClient, resolveCloudApiKey } from "../../packages/toolrelay/src/backends/letta-rest-client.js";
import { isToolrelayError } from "../../packages/toolrelay/src/errors.js";

const baseUrl = "https://api.letta.test";
const key = "canary-rest-key-93e1";
const requests: Request[] = [];

const connection = (id: string, name: string, extra: Record<string, unknown> = {}) => ({
  id,
  connectionId: `conn-${id}`,
  deviceId: `device-${id}`,
  connectionName: name,
  connectedAt: 1_700_000_000_000,
  firstSeenAt: 1,
  lastHeartbeat: null,
  lastSeenAt: 1,
  organizationId: "org",
  podId: null,
  ...extra,
});

const server = setupServer();

beforeAll(() => server.listen({ onUnhandledRequest: "error" }));
afterEach(() => {
  server.resetHandlers();
  requests.length = 0;
  vi.unstubAllEnvs();
});
afterAll(() => server.close());

function listing(pages: Array<{ connections: unknown[]; hasNextPage: boolean }>) {
  server.use(
    http.get(`${baseUrl}/v1/environments`, ({ request }) => {
      requests.push(request.clone());
      const after = new URL(request.url).searchParams.get("after");
      const index =
        after === null ? 0 : pages.findIndex((page) => (page.connections as Array<{ id: string }>).some((entry) => entry.id === after)) + 1;
      return HttpResponse.json(pages[index] ?? { connections: [], hasNextPage: false });
    }),
  );
}

function failing(status: number) {
  server.use(
    http.get(`${baseUrl}/v1/environments`, ({ request }) => {
      requests.push(request.clone());
      return HttpResponse.json({ detail: `nope, key ${key} is bad` }, { status });
    }),
  );
}

const client = () =>
  createLettaRestClient({ apiKey: key, baseUrl, maxRetries: 0, headers: { "x-project-id": "p-1", Authorization: "Bearer other" } });

describe("resolveCloudEnvironment", () => {
  it("finds an environment by name, id, connectionId or deviceId, through every page", async () => {
    listing([
      { connections: [connection("env-a", "laptop")], hasNextPage: true },
      { connections: [connection("env-b", "sandbox")], hasNextPage: false },
    ]);
    await expect(resolveCloudEnvironment(await client(), { name: "sandbox" })).resolves.toMatchObject({
      id: "env-b",
      connectionId: "conn-env-b",
    });
    await expect(resolveCloudEnvironment(await client(), { id: "env-a" })).resolves.toMatchObject({ connectionId: "conn-env-a" });
    await expect(resolveCloudEnvironment(await client(), { connectionId: "conn-env-b" })).resolves.toMatchObject({ name: "sandbox" });
    await expect(resolveCloudEnvironment(await client(), { deviceId: "device-env-b" })).resolves.toMatchObject({ id: "env-b" });
    expect(new URL(requests[1]!.url).searchParams.get("after")).toBe("env-a");
  });

  it("authenticates with the Bearer key and keeps caller headers, replacing a caller authorization", async () => {
    listing([{ connections: [connection("env-a", "laptop")], hasNextPage: false }]);
    await resolveCloudEnvironment(await client(), { name: "laptop" });
    expect(requests[0]!.headers.get("authorization")).toBe(`Bearer ${key}`);
    expect(requests[0]!.headers.get("x-project-id")).toBe("p-1");
    expect(requests[0]!.url).not.toContain(key);
  });

  it("prefers the connected, newest environment when several share a name", async () => {
    listing([
      {
        connections: [
          connection("old", "box", { connectedAt: 1 }),
          connection("offline", "box", { connectionId: null, connectedAt: null }),
          connection("new", "box", { connectedAt: 5 }),
        ],
        hasNextPage: false,
      },
    ]);
    await expect(resolveCloudEnvironment(await client(), { name: "box" })).resolves.toMatchObject({ id: "new" });
  });

  it("rejects with NOT_FOUND listing the candidates when nothing matches", async () => {
    listing([{ connections: [connection("env-a", "laptop"), connection("env-b", "sandbox")], hasNextPage: false }]);
    const failure = resolveCloudEnvironment(await client(), { name: "desk" });
    await expect(failure).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining('"laptop" (id env-a), "sandbox" (id env-b)'),
      details: {
        field: "name",
        value: "desk",
        candidates: [expect.objectContaining({ id: "env-a" }), expect.objectContaining({ id: "env-b" })],
      },
    });
  });

  it("rejects with NOT_FOUND when the environment is registered but not connected", async () => {
    listing([{ connections: [connection("env-a", "laptop", { connectionId: null })], hasNextPage: false }]);
    await expect(resolveCloudEnvironment(await client(), { name: "laptop" })).rejects.toMatchObject({
      code: "NOT_FOUND",
      message: expect.stringContaining("not connected"),
    });
  });

  it.each([
    [401, "UNAUTHORIZED"],
    [403, "UNAUTHORIZED"],
    [404, "NOT_FOUND"],
    [500, "REST_FAILED"],
    [422, "REST_FAILED"],
  ])("maps HTTP %i to %s with the client's error as cause and no key in the message", async (status, code) => {
    failing(status);
    const error = await resolveCloudEnvironment(await client(), { name: "x" }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code, details: { status } });
    expect(isToolrelayError(error)).toBe(true);
    expect((error as Error).cause).toMatchObject({ status });
    expect((error as Error).message).not.toContain(key);
    expect(JSON.stringify((error as { details: unknown }).details)).not.toContain(key);
  });

  it("maps a network failure to REST_FAILED", async () => {
    server.use(http.get(`${baseUrl}/v1/environments`, () => HttpResponse.error()));
    await expect(resolveCloudEnvironment(await client(), { id: "x" })).rejects.toMatchObject({
      code: "REST_FAILED",
      message: expect.stringContaining("could not reach the Letta API"),
      cause: expect.anything(),
    });
  });

  it("leaves retries to the client (a 503 then a 200 succeeds with maxRetries 1)", async () => {
    let calls = 0;
    server.use(
      http.get(`${baseUrl}/v1/environments`, () => {
        calls++;
        return calls === 1
          ? // No body: letta-client cancels the body of a response it retries, and that cancel never settles on an msw body stream.
            new HttpResponse(null, { status: 503, headers: { "retry-after-ms": "10" } })
          : HttpResponse.json({ connections: [connection("env-a", "laptop")], hasNextPage: false });
      }),
    );
    const retrying = await createLettaRestClient({ apiKey: key, baseUrl, maxRetries: 1 });
    await expect(resolveCloudEnvironment(retrying, { name: "laptop" })).resolves.toMatchObject({ id: "env-a" });
    expect(calls).toBe(2);
  });

  it("rejects a selector without exactly one non-empty key", async () => {
    for (const selector of [{}, { name: "" }, { name: "a", id: "b" }, { colour: "red" }]) {
      await expect(resolveCloudEnvironment(await client(), selector as never)).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    }
    expect(requests).toEqual([]);
  });
});

describe("cloud API key", () => {
  it("takes the option, then LETTA_API_KEY, then LETTA_CLOUD_API_KEY", () => {
    vi.stubEnv("LETTA_API_KEY", "from-env");
    vi.stubEnv("LETTA_CLOUD_API_KEY", "from-cloud-env");
    expect(resolveCloudApiKey("explicit")).toBe("explicit");
    expect(resolveCloudApiKey(undefined)).toBe("from-env");
    vi.stubEnv("LETTA_API_KEY", "");
    expect(resolveCloudApiKey(undefined)).toBe("from-cloud-env");
    vi.stubEnv("LETTA_CLOUD_API_KEY", "");
    expect(() => resolveCloudApiKey(undefined)).toThrow(expect.objectContaining({ code: "INVALID_OPTIONS" }));
  });
});

describe("createCloudLink", () => {
  it("resolves a named environment and builds an unconnected link for its connectionId", async () => {
    listing([{ connections: [connection("env-a", "laptop")], hasNextPage: false }]);
    const link = await createCloudLink(
      { kind: "cloud", apiKey: key, baseUrl, environment: { name: "laptop" }, restMaxRetries: 0 },
      { agentId: "agent-1" },
    );
    expect(link.connectionId).toBe("conn-env-a");
    expect(link.state).toBe("idle");
    expect(link.runtime).toEqual({ agentId: "agent-1" });
    expect(link.keepsPendingCallsAcrossReconnect).toBe(true);
    await link.close();
  });

  it("uses an explicit connectionId without any REST call", async () => {
    const link = await createCloudLink({ kind: "cloud", apiKey: key, baseUrl, environment: { connectionId: "conn-x" } });
    expect(link.connectionId).toBe("conn-x");
    expect(requests).toEqual([]);
    await link.close();
  });

  it("surfaces REST failures with their codes and a missing key as INVALID_OPTIONS", async () => {
    failing(401);
    await expect(
      createCloudLink({ kind: "cloud", apiKey: key, baseUrl, environment: { id: "env-a" }, restMaxRetries: 0 }),
    ).rejects.toMatchObject({
      code: "UNAUTHORIZED",
    });
    vi.stubEnv("LETTA_API_KEY", "");
    vi.stubEnv("LETTA_CLOUD_API_KEY", "");
    await expect(createCloudLink({ kind: "cloud", baseUrl, environment: { id: "env-a" } })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
    });
  });
});
