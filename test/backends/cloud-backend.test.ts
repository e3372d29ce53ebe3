import { http, HttpResponse } from "msw";
import { setupServer } from "msw/node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createCloudLink } from "../../packages/toolrelay/src/backends/cloud-backend.js";
import type { CloudLink } from "../../packages/toolrelay/src/transport/cloud-link.js";
import { FakeStatusRelay, waitFor } from "../transport/cloud-fake-relay.js";

// msw mocks only the Letta REST API, and only while the REST lookup runs: its Node interceptor
// would otherwise also wrap the WebSocket upgrade requests, which go to a real relay on 127.0.0.1.
const server = setupServer();
let relay: FakeStatusRelay;
const links: CloudLink[] = [];

beforeAll(async () => {
  relay = await FakeStatusRelay.start();
});
afterEach(async () => {
  server.close();
  server.resetHandlers();
  await Promise.all(links.splice(0).map((link) => link.close()));
});
afterAll(async () => {
  await relay.stop();
});

describe("cloud backend end to end (REST lookup, then the status sockets)", () => {
  it("resolves an environment by name and connects to its status sockets with the same key", async () => {
    server.listen({ onUnhandledRequest: "error" });
    server.use(
      http.get(`${relay.baseUrl}/v1/environments`, () =>
        HttpResponse.json({
          connections: [{ id: "env-1", connectionId: "conn-live", deviceId: "dev-1", connectionName: "sandbox", connectedAt: 5 }],
          hasNextPage: false,
        }),
      ),
    );
    const link = await createCloudLink(
      {
        kind: "cloud",
        apiKey: "key-1",
        baseUrl: relay.baseUrl,
        environment: { name: "sandbox" },
        headers: { "x-project-id": "p" },
        restMaxRetries: 0,
      },
      { agentId: "agent-1", conversationId: "default" },
    );
    links.push(link);
    server.close();
    await link.connect();
    const control = relay.current("control");
    expect(control.url.pathname).toBe("/v1/environments/conn-live/status/ws");
    expect(control.url.searchParams.get("conversationId")).toBe("default");
    expect(control.headers.authorization).toBe("Bearer key-1");
    expect(control.headers["x-project-id"]).toBe("p");
    relay.send("stream", { type: "update_queue", queue: [], seq: 1 });
    await waitFor(() => relay.current("stream").received.some((frame) => frame.type === "ack"), 2_000, "ack");
  });

  it("passes heartbeat options through to the link", async () => {
    const link = await createCloudLink({
      kind: "cloud",
      apiKey: "key-1",
      baseUrl: relay.baseUrl,
      environment: { connectionId: "conn-x" },
      pingIntervalMs: 20,
      pongTimeoutMs: 1_000,
    });
    links.push(link);
    await link.connect();
    await waitFor(() => relay.current("stream").received.filter((frame) => frame.type === "ping").length >= 2, 2_000, "pings");
    expect(relay.current("control").received.some((frame) => frame.type === "ping")).toBe(true);
  });
});
