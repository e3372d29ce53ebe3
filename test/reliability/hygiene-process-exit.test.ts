/**
 * P6: after close() nothing of ours keeps the process alive; while something of
 * the session is in flight (here: the 10 hanging calls), the session does. An idle
 * session lets the process go (integration/forgotten-close.test.ts). A child
 * process (fixtures/close-exits.ts) connects to a scripted runtime run here, takes 100 calls of which 10 hang, closes the
 * session, and must exit by itself within 1 s of its "closed" line.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { startScriptedRuntime, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
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
  const child = spawn(process.execPath, ["--import", "tsx", fixture, url, ...extra], { cwd: root, stdio: ["pipe", "pipe", "pipe"] });
  children.push(child);
  child.stdin!.on("error", () => undefined); // a child that already exited cannot take the go-ahead
  const output = { stdout: "", stderr: "", lineAt: undefined as number | undefined, released: false };
  child.stdout!.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString();
    // The child wrote 90 answers; it closes once this runtime has read them (a written answer can
    // still be in flight, and a peer slower than close()'s 1 s handshake may lose what is in flight).
    if (/^answered$/m.test(output.stdout) && !output.released) {
      output.released = true;
      void until(() => runtime!.calls.filter((record) => record.status === "answered").length >= 90, "90 answers read", 15_000)
        .then(() => child.stdin!.end("close\n"))
        .catch(() => child.kill("SIGKILL"));
    }
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
      // P4: close() answered the 10 hanging calls at once (cancelled), before the socket closed. The
      // child's exit can reach this process before the last bytes it wrote are read here (both wake
      // the same poll), so the records are read once the runtime saw the socket close: TCP delivers
      // in order, and the close comes after every frame the child wrote.
      await until(() => runtime!.connections === 0, "the runtime saw the child's socket close");
      const hanging = Array.from({ length: 10 }, (_, index) => `exit-${index * 10 + 9}`);
      const isHanging = (id: string) => hanging.includes(id);
      if (TIME_SCALE === 1) {
        expect(runtime!.calls.map((record) => record.status)).toEqual(Array(100).fill("answered"));
        expect(runtime!.calls.filter((record) => record.result?.isError).map((record) => record.toolCallId)).toEqual(hanging);
      } else {
        // Under the leak check this runtime is slowed down so much that it misses close()'s 1 s
        // close handshake; the socket is then terminated, the runtime (busy writing) never reads the
        // last bytes, and it settles the cancelled calls "connection-closed" itself (none stays
        // pending; the turn is not stranded).
        expect(runtime!.calls.filter((record) => !isHanging(record.toolCallId) && record.status !== "answered")).toEqual([]);
        const cancelled = runtime!.calls.filter((record) => isHanging(record.toolCallId));
        const settled = (record: (typeof cancelled)[number]) =>
          record.status === "connection-closed" || (record.status === "answered" && record.result?.isError === true);
        expect(cancelled.filter((record) => !settled(record))).toEqual([]);
      }
    },
    scaled(20_000),
  );

  it(
    "without close(), a session with calls in flight keeps the process alive (the measurement above can fail)",
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
