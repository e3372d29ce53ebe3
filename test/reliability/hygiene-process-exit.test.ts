/**
 * P6: after close() nothing of ours keeps the process alive; while connected,
 * the socket does. A child process (fixtures/close-exits.ts) connects to a
 * scripted runtime run here, takes 100 calls of which 10 hang, closes the
 * session, and must exit by itself within 1 s of its "closed" line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime } from "../../src/testing/index.js";
import { TIME_SCALE, letTimePass, scaled, until, within } from "./support/wait.js";

const fixture = fileURLToPath(new URL("./fixtures/close-exits.ts", import.meta.url));
const root = fileURLToPath(new URL("../..", import.meta.url));
let runtime: ScriptedRuntime | undefined;
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
  }
  await runtime?.close();
  runtime = undefined;
});

async function startRuntime(): Promise<ScriptedRuntime> {
  runtime = await startScriptedRuntime({
    script: async (turn) => {
      await Promise.all(
        Array.from({ length: 100 }, (_, index) => {
          const hang = index % 10 !== 9 ? "none" : index % 20 === 9 ? "forever" : "timer";
          return turn.callTool("work", { hang }, { toolCallId: `exit-${index}` });
        }),
      );
    },
  });
  return runtime;
}

function runFixture(url: string, ...extra: string[]) {
  const child = spawn(process.execPath, ["--import", "tsx", fixture, url, ...extra], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  const output = { stdout: "", stderr: "", lineAt: undefined as number | undefined };
  child.stdout!.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString();
    if (output.lineAt === undefined && /^(closed|skipped)/m.test(output.stdout)) output.lineAt = Date.now();
  });
  child.stderr!.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once("exit", (code) => resolve({ code, at: Date.now() })),
  );
  return { child, output, exited };
}

describe("process exit after close()", () => {
  it(
    "100 calls, 10 hanging: the process exits within 1 s of close()",
    async () => {
      const { url } = await startRuntime();
      const { output, exited } = runFixture(url);
      const exit = await within(exited, "child exits", 15_000).catch((error: Error) => {
        throw new Error(`${error.message}\nstdout: ${output.stdout}\nstderr: ${output.stderr}`);
      });
      expect({ code: exit.code, stderr: output.stderr }).toEqual({ code: 0, stderr: "" });
      expect(output.lineAt, output.stdout).toBeDefined();
      const report = JSON.parse(output.stdout.slice(output.stdout.indexOf("closed ") + "closed ".length)) as {
        pendingBeforeClose: number;
        pendingAfterClose: number;
        resources: string[];
      };
      expect(report).toMatchObject({ pendingBeforeClose: 10, pendingAfterClose: 0 });
      const exitMs = exit.at - output.lineAt!;
      console.log(`process exit figures ${JSON.stringify({ exitAfterCloseMs: exitMs, resourcesAfterClose: report.resources })}`);
      expect(exitMs).toBeLessThanOrEqual(scaled(1_000));
      // P4: close() answered the 10 hanging calls at once (cancelled), before the socket closed.
      const hanging = Array.from({ length: 10 }, (_, index) => `exit-${index * 10 + 9}`);
      const isHanging = (id: string) => hanging.includes(id);
      if (TIME_SCALE === 1) {
        expect(runtime!.calls.map((record) => record.status)).toEqual(Array(100).fill("answered"));
        expect(runtime!.calls.filter((record) => record.result?.isError).map((record) => record.toolCallId)).toEqual(hanging);
      } else {
        // Under the leak check this runtime is slowed down so much that it misses close()'s 1 s
        // close handshake; the socket is then terminated and the cancelled answers can be lost with it.
        expect(runtime!.calls.filter((record) => !isHanging(record.toolCallId)).every((record) => record.status === "answered")).toBe(true);
        expect(runtime!.calls.filter((record) => record.status === "pending")).toEqual([]);
      }
    },
    scaled(20_000),
  );

  it(
    "without close(), the open session keeps the process alive (the measurement above can fail)",
    async () => {
      const { url } = await startRuntime();
      const { child, output, exited } = runFixture(url, "--skip-close");
      await until(() => output.lineAt, "skipped line", 15_000);
      let exitedEarly = false;
      void exited.then(() => (exitedEarly = true));
      await letTimePass(1_500); // on purpose: the process must not exit by itself within this window
      expect(exitedEarly, output.stderr).toBe(false);
      child.kill("SIGTERM");
      await within(exited, "child killed", 5_000);
    },
    scaled(20_000),
  );
});
