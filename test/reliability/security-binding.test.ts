/**
 * Loopback-only binding unless auth is configured, for both servers we ship:
 * the scripted runtime (`authToken`) and the relay (`apiKeys`, library and CLI).
 * A non-loopback host without auth is refused before anything listens; the
 * default bind is reachable on loopback and not on the machine's other
 * interfaces.
 */
import { spawn } from "node:child_process";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { startRelay } from "../../packages/relay/src/index.js";
import { startScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";

const NON_LOOPBACK_HOSTS = ["0.0.0.0", "::", "0", "192.0.2.10", "example.com", "127.0.0.1.nip.io", "localhost.evil.example"];
const RELAY_BIN = fileURLToPath(new URL("../../packages/relay/src/bin.ts", import.meta.url));

/** A non-internal IPv4 address of this machine, if it has one. */
function externalAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    for (const address of addresses ?? []) if (address.family === "IPv4" && !address.internal) return address.address;
  }
  return undefined;
}

/** Resolves "open" or "refused" for a TCP connect (deadline 2 s). */
function probe(host: string, port: number): Promise<"open" | "refused"> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const timer = setTimeout(() => finish("refused"), 2_000);
    function finish(result: "open" | "refused"): void {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    }
    socket.once("connect", () => finish("open"));
    socket.once("error", () => finish("refused"));
  });
}

describe("scripted runtime binding", () => {
  it.each(NON_LOOPBACK_HOSTS)("refuses host %s without authToken", async (host) => {
    await expect(startScriptedRuntime({ script: () => undefined, host })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("refusing to bind non-loopback host"),
    });
  });

  it("refuses an empty authToken", async () => {
    await expect(startScriptedRuntime({ script: () => undefined, host: "0.0.0.0", authToken: "  " })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
    });
  });

  it("binds 0.0.0.0 once authToken is set", async () => {
    const runtime = await startScriptedRuntime({
      script: () => undefined,
      host: "0.0.0.0",
      authToken: "secret-token",
      heartbeatIntervalMs: 0,
    });
    try {
      expect(await probe("127.0.0.1", runtime.port)).toBe("open");
    } finally {
      await runtime.close();
    }
  });

  it("binds loopback by default: reachable on 127.0.0.1, not on another interface", async () => {
    const runtime = await startScriptedRuntime({ script: () => undefined, heartbeatIntervalMs: 0 });
    try {
      expect(new URL(runtime.url).hostname).toBe("127.0.0.1");
      expect(await probe("127.0.0.1", runtime.port)).toBe("open");
      const external = externalAddress();
      if (external !== undefined) expect(await probe(external, runtime.port)).toBe("refused");
    } finally {
      await runtime.close();
    }
  });
});

describe("relay binding", () => {
  it.each(NON_LOOPBACK_HOSTS)("refuses host %s without apiKeys", async (host) => {
    await expect(startRelay({ host })).rejects.toMatchObject({
      code: "INVALID_OPTIONS",
      message: expect.stringContaining("refusing to bind non-loopback host"),
    });
  });

  it("refuses empty or blank API keys (they would make a public bind keyless)", async () => {
    await expect(startRelay({ host: "0.0.0.0", apiKeys: [""] })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
    await expect(startRelay({ host: "0.0.0.0", apiKeys: [" "] })).rejects.toMatchObject({ code: "INVALID_OPTIONS" });
  });

  it("binds 0.0.0.0 once apiKeys are set", async () => {
    const relay = await startRelay({ host: "0.0.0.0", apiKeys: ["relay-key-0123"], heartbeatIntervalMs: 0 });
    try {
      expect(await probe("127.0.0.1", relay.port)).toBe("open");
    } finally {
      await relay.close();
    }
  });

  it("binds loopback by default: reachable on 127.0.0.1, not on another interface", async () => {
    const relay = await startRelay({ heartbeatIntervalMs: 0 });
    try {
      expect(relay.host).toBe("127.0.0.1");
      expect(await probe("127.0.0.1", relay.port)).toBe("open");
      const external = externalAddress();
      if (external !== undefined) expect(await probe(external, relay.port)).toBe("refused");
    } finally {
      await relay.close();
    }
  });

  it("CLI: --host 0.0.0.0 without --api-key exits 1 without listening", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", RELAY_BIN, "--host", "0.0.0.0", "--port", "0"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error("relay CLI did not exit within 15 s"));
      }, 15_000);
      child.once("exit", (code) => {
        clearTimeout(timer);
        resolve(code);
      });
    });
    expect(exitCode).toBe(1);
    expect(stdout).not.toContain("Relay listening");
    expect(stderr).toContain("refusing to bind non-loopback host 0.0.0.0");
  });
});
