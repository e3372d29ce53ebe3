/**
 * A canary credential with every kind of failure and debug logging on: it must
 * appear in no error (message, stack, details, cause chain), no close reason,
 * no URL the SDK opened, no relay output, and no relay answer — only in the
 * Authorization header itself.
 *
 * - local session (`token: CANARY`) against a scripted runtime that refuses it (401);
 * - local link against a server that accepts, closes with a reason quoting the
 *   token, then refuses with a 401 that echoes the Authorization header;
 * - cloud session (`apiKey: CANARY`) against a fake relay that accepts, closes
 *   with a reason quoting the key (raw and URL-encoded), drops, then 401s with an echo;
 * - the relay CLI with `--debug --api-key CANARY`: registration, listener and SDK
 *   sockets, wrong keys containing the canary, a query-string token, duplicate
 *   headers, a dropped SDK socket; then its stdout/stderr.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createSession, type Session } from "../../packages/toolrelay/src/index.js";
import { createSessionOnLink } from "../../packages/toolrelay/src/session/create-session.js";
import { startScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { CloudLink } from "../../packages/toolrelay/src/transport/cloud-link.js";
import { LocalLink } from "../../packages/toolrelay/src/transport/local-link.js";
import { CANARY, LeakRecorder } from "./support-security/canary.js";
import { EchoingServer } from "./support-security/echoing-server.js";
import { rawUpgrade, upgradeHeaders } from "./support-security/raw-upgrade.js";
import { postJson, SingleSocketListener } from "./support-security/relay-listener.js";
import { until } from "./support/wait.js";

const RELAY_BIN = fileURLToPath(new URL("../../packages/relay/src/bin.ts", import.meta.url));
const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Authorization headers may carry the canary; every other header and the URL may not. */
function recordUpgrades(recorder: LeakRecorder, upgrades: EchoingServer["upgrades"]): void {
  for (const upgrade of upgrades) {
    recorder.text("url", upgrade.url);
    for (const [name, value] of Object.entries(upgrade.headers))
      if (name !== "authorization") recorder.text(`header ${name}`, String(value));
  }
}

function recordSession(recorder: LeakRecorder, session: Session): void {
  session.on("error", (error) => recorder.error("session error", error));
  session.on("connection-state-change", (change) => recorder.text("state", JSON.stringify(change)));
}

describe("the leak recorder", () => {
  it("finds the canary raw, URL-encoded, form-encoded, base64 and truncated, in errors and their causes", () => {
    const recorder = new LeakRecorder();
    recorder.text("clean", "nothing here: Bearer [redacted]");
    expect(recorder.leaks()).toEqual([]);
    const forms = [
      CANARY,
      encodeURIComponent(CANARY),
      new URLSearchParams({ k: CANARY }).toString(),
      Buffer.from(CANARY).toString("base64"),
      CANARY.slice(0, 14),
    ];
    for (const form of forms) recorder.text("form", `x ${form} y`);
    recorder.error("cause", new Error("outer", { cause: new Error(`inner ${CANARY}`) }));
    const leaks = recorder.leaks();
    expect(leaks.filter((leak) => leak.startsWith("form:"))).toHaveLength(forms.length);
    expect(leaks.some((leak) => leak.startsWith("cause:"))).toBe(true);
  });
});

describe("canary token: local", () => {
  it("a session whose token the scripted runtime refuses (401): the error carries no canary", async () => {
    const runtime = await startScriptedRuntime({ script: () => undefined, authToken: "the-real-token", heartbeatIntervalMs: 0 });
    cleanups.push(() => runtime.close());
    const recorder = new LeakRecorder();
    const failure = await createSession({
      backend: { kind: "local", url: runtime.url, token: CANARY, reconnect: false },
      agent: { id: "agent-1" },
    }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: "UNAUTHORIZED" });
    recorder.error("createSession rejection", failure);
    expect(recorder.count("createSession rejection")).toBeGreaterThan(0);
    expect(recorder.leaks()).toEqual([]);
  });

  it("a link whose server closes with a reason quoting the token, then 401s echoing it: no canary in errors, close reasons or URLs", async () => {
    const server = await EchoingServer.start(["accept", "refuse-401"]);
    cleanups.push(() => server.close());
    const recorder = new LeakRecorder();
    const link = new LocalLink({
      url: `ws://127.0.0.1:${server.port}/ws`,
      token: CANARY,
      pingIntervalMs: 0,
      backoff: { initialDelayMs: 5, maxDelayMs: 20 },
    });
    link.on("error", (error) => recorder.error("link error", error));
    const session = await createSessionOnLink({ backend: { kind: "link", link }, agent: { id: "agent-1" } });
    cleanups.push(() => session.close());
    recordSession(recorder, session);
    recorder.text("link url", link.url);
    server.closeAll(4001, `token ${CANARY} revoked`);
    await until(() => link.state === "closed", "the link to give up after the 401");
    await session.close();
    recordUpgrades(recorder, server.upgrades);
    for (const reason of server.clientCloseReasons) recorder.text("close reason sent by the SDK", reason);
    expect(server.upgrades).toHaveLength(2);
    expect(server.upgrades.every((upgrade) => upgrade.headers.authorization === `Bearer ${CANARY}`)).toBe(true);
    // The hostile reason did reach the SDK's error path (and was redacted there), and the 401 was reported.
    expect(recorder.texts("link error").some((text) => text.includes("revoked") && text.includes("[redacted]"))).toBe(true);
    expect(recorder.texts("link error")).toContain("UNAUTHORIZED");
    expect(recorder.leaks()).toEqual([]);
  });
});

describe("canary token: local, encoded forms", () => {
  it("a close reason quoting the token URL-encoded is redacted like the raw token (as the cloud link does)", async () => {
    const server = await EchoingServer.start(["accept"]);
    cleanups.push(() => server.close());
    const recorder = new LeakRecorder();
    const link = new LocalLink({ url: `ws://127.0.0.1:${server.port}/ws`, token: CANARY, pingIntervalMs: 0, reconnect: false });
    link.on("error", (error) => recorder.error("link error", error));
    await link.connect();
    server.closeAll(4001, `token ${encodeURIComponent(CANARY)} revoked`);
    await until(() => link.state === "closed", "the link to close");
    expect(recorder.texts("link error").some((text) => text.includes("revoked"))).toBe(true);
    expect(recorder.leaks()).toEqual([]);
  });
});

describe("canary token: cloud", () => {
  /** A cloud session on `server` (environment env-canary, fast reconnects), recorded by `recorder`. */
  async function cloudSession(server: EchoingServer, recorder: LeakRecorder): Promise<Session> {
    const session = await createSession({
      backend: {
        kind: "cloud",
        apiKey: CANARY,
        baseUrl: `http://127.0.0.1:${server.port}`,
        environment: { connectionId: "env-canary" },
        pingIntervalMs: 0,
        backoff: { initialDelayMs: 5, maxDelayMs: 20 },
      },
      agent: { id: "agent-canary" },
      conversation: "default",
    });
    cleanups.push(() => session.close());
    recordSession(recorder, session);
    await until(() => server.openSockets === 2, "both status sockets");
    return session;
  }

  it("a cloud session against a relay that closes with the key in the reason, drops, then 401s with an echo", async () => {
    const server = await EchoingServer.start(["accept", "accept", "accept", "accept", "refuse-401"]);
    cleanups.push(() => server.close());
    const recorder = new LeakRecorder();
    const session = await cloudSession(server, recorder);
    server.closeAll(4003, `key ${CANARY} / ${encodeURIComponent(CANARY)} is revoked`);
    await until(() => server.upgrades.length >= 4 && server.openSockets === 2, "the first reconnect");
    server.terminateAll();
    await until(() => session.state === "closed", "the link to give up after the 401");
    await session.close();
    recordUpgrades(recorder, server.upgrades);
    for (const reason of server.clientCloseReasons) recorder.text("close reason sent by the SDK", reason);
    expect(server.upgrades).toHaveLength(6);
    expect(server.upgrades.every((upgrade) => upgrade.headers.authorization === `Bearer ${CANARY}`)).toBe(true);
    const errors = recorder.texts("session error");
    expect(errors.some((text) => text.includes("revoked") && text.includes("[redacted]"))).toBe(true);
    expect(errors).toContain("UNAUTHORIZED");
    expect(recorder.leaks()).toEqual([]);
  });

  it("a cloud session closed with 1008 and the key in the reason (environment gone)", async () => {
    const server = await EchoingServer.start(["accept"]);
    cleanups.push(() => server.close());
    const recorder = new LeakRecorder();
    const session = await cloudSession(server, recorder);
    server.closeAll(1008, `environment gone for ${CANARY}`);
    await until(() => session.state === "closed", "the link to close for good");
    await session.close();
    recordUpgrades(recorder, server.upgrades);
    for (const reason of server.clientCloseReasons) recorder.text("close reason sent by the SDK", reason);
    expect(recorder.texts("session error").some((text) => text.includes("environment gone for [redacted]"))).toBe(true);
    expect(recorder.leaks()).toEqual([]);
  });

  it("a cloud link refused with 401 and an echoing body on connect: the rejection carries no canary", async () => {
    const server = await EchoingServer.start(["refuse-401"]);
    cleanups.push(() => server.close());
    const recorder = new LeakRecorder();
    const link = new CloudLink({
      connectionId: "env-canary",
      apiKey: CANARY,
      baseUrl: `http://127.0.0.1:${server.port}`,
      pingIntervalMs: 0,
    });
    link.on("error", (error) => recorder.error("link error", error));
    const failure = await link.connect().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: "UNAUTHORIZED" });
    recorder.error("connect rejection", failure);
    await link.close();
    recordUpgrades(recorder, server.upgrades);
    expect(server.upgrades).toHaveLength(2);
    expect(recorder.leaks()).toEqual([]);
  });
});

/** Start the relay CLI; resolves with its HTTP base once it prints its address. */
async function startRelayCli(
  args: string[],
): Promise<{ child: ChildProcessWithoutNullStreams; httpUrl: string; output: { stdout: string; stderr: string } }> {
  const child = spawn(process.execPath, ["--import", "tsx", RELAY_BIN, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  const output = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => (output.stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output.stderr += chunk.toString()));
  cleanups.push(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  await until(() => /Relay listening on (\S+)/.test(output.stdout) || child.exitCode !== null, "the relay CLI to listen", 15_000);
  const match = /Relay listening on (\S+)/.exec(output.stdout);
  if (!match) throw new Error(`relay CLI did not start: ${output.stderr}`);
  return { child, httpUrl: match[1]!, output };
}

describe("canary token: relay CLI with --debug", () => {
  it("writes the key to no output and no answer, whatever the clients do", async () => {
    const { child, httpUrl, output } = await startRelayCli([
      "--debug",
      "--api-key",
      CANARY,
      "--listener-mode",
      "single",
      "--enable-test-hooks",
    ]);
    const recorder = new LeakRecorder();
    const port = Number(new URL(httpUrl).port);
    const wrongKey = `${CANARY}x`;

    // REST with a wrong key that contains the canary, and with the key in the query string.
    for (const [path, key] of [
      ["/v1/environments/register", wrongKey],
      [`/v1/environments?token=${encodeURIComponent(CANARY)}`, undefined],
    ] as const) {
      const answer = await postJson(
        `${httpUrl}${path}`,
        { deviceId: "d", connectionName: "c" },
        key ? { authorization: `Bearer ${key}` } : {},
      );
      expect(answer.status).toBe(401);
      recorder.text(`REST answer ${path}`, answer.text);
    }

    // A listener registers and connects with the right key; its wsUrl carries no key.
    const listener = await SingleSocketListener.start(httpUrl, CANARY);
    cleanups.push(() => listener.terminate());
    recorder.text("wsUrl", listener.environment.wsUrl);
    const statusPath = `/v1/environments/${listener.environment.connectionId}/status/ws?channel=control&sessionId=canary`;

    // Raw upgrades: query-string token, wrong key, duplicate headers.
    const refusals: Array<[string, Array<[string, string]>]> = [
      [`${statusPath}&token=${encodeURIComponent(CANARY)}`, []],
      [statusPath, [["Authorization", `Bearer ${wrongKey}`]]],
      [
        statusPath,
        [
          ["Authorization", `Bearer ${CANARY}`],
          ["Authorization", `Bearer ${wrongKey}`],
        ],
      ],
    ];
    for (const [path, headers] of refusals) {
      const answer = await rawUpgrade({ port, path, headers: [...upgradeHeaders(), ...headers] });
      expect(answer.status).toBe(401);
      recorder.text(`upgrade answer ${path.slice(0, 30)}`, answer.text);
    }

    // The SDK's cloud link: once with a wrong key, once with the right one, dropped by the relay.
    const wrong = new CloudLink({ connectionId: listener.environment.connectionId, apiKey: wrongKey, baseUrl: httpUrl, pingIntervalMs: 0 });
    wrong.on("error", (error) => recorder.error("cloud link error", error));
    await expect(wrong.connect()).rejects.toMatchObject({ code: "UNAUTHORIZED" });
    await wrong.close();
    const link = new CloudLink({
      connectionId: listener.environment.connectionId,
      apiKey: CANARY,
      baseUrl: httpUrl,
      pingIntervalMs: 0,
      backoff: { initialDelayMs: 5, maxDelayMs: 20 },
    });
    link.on("error", (error) => recorder.error("cloud link error", error));
    cleanups.push(() => link.close());
    await link.connect();
    const dropped = await postJson(
      `${httpUrl}/_relay/drop-sdk-sockets`,
      { reason: "dropped by the canary test" },
      { authorization: `Bearer ${CANARY}` },
    );
    recorder.text("test hook answer", dropped.text);
    await until(() => recorder.count("cloud link error") >= 2 && link.state === "open", "the cloud link to reconnect");
    await link.close();

    child.kill("SIGTERM");
    await until(() => child.exitCode !== null, "the relay CLI to exit", 10_000);
    recorder.text("relay stdout", output.stdout);
    recorder.text("relay stderr", output.stderr);
    expect(output.stderr).toContain("relay: http request"); // --debug was on: the log has lines to check
    expect(recorder.leaks()).toEqual([]);
  });
});
