/**
 * `DEBUG=toolrelay*` on the demo (examples/quickstart.ts, `npm run demo`) in a child process:
 * stderr tells the session's life — start, link, turn, tool call, end — and never a prompt, an
 * argument or a result. The canary is the city: it is in the prompt, in the tool's arguments and
 * in its result (stdout shows it went through).
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));
const tsx = fileURLToPath(new URL("../../node_modules/tsx/dist/cli.mjs", import.meta.url));
const CANARY = "Canary-city-9d41c";

function runDemo(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [tsx, "examples/quickstart.ts", CANARY], {
      cwd: root,
      env: { ...process.env, ...env, FORCE_COLOR: "0", DEBUG_COLORS: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const deadline = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("DEBUG=toolrelay* on the demo", () => {
  it("prints the turn's life on stderr without the prompt, the arguments or the result", async () => {
    const { code, stdout, stderr } = await runDemo({ DEBUG: "toolrelay*" });
    expect(code, stderr).toBe(0);
    expect(stdout).toContain(`sunny and 21 °C in ${CANARY}`); // the canary went through the tool and back
    const lines = stderr.split("\n");
    const order = [
      "toolrelay:session session start backend=local",
      "toolrelay:link link state state=open",
      "toolrelay:session session open",
      "toolrelay:turn turn start",
      "toolrelay:tool tool call start toolName=get_weather",
      "toolrelay:tool tool call end toolName=get_weather",
      "toolrelay:turn turn end stopReason=end_turn toolCalls=1",
      "toolrelay:session session close",
      "toolrelay:link link state state=closed",
    ];
    const positions = order.map((text) => lines.findIndex((line) => line.includes(text)));
    expect(
      positions.every((position) => position >= 0),
      `every step on stderr:\n${stderr}`,
    ).toBe(true);
    expect([...positions].sort((left, right) => left - right)).toEqual(positions);
    expect(lines.find((line) => line.includes("tool call end"))).toMatch(/outcome=ok durationMs=\d+/);
    expect(stderr).not.toContain(CANARY);
    expect(stderr.toLowerCase()).not.toContain(CANARY.toLowerCase());
  }, 40_000);

  it("prints nothing on stderr without DEBUG", async () => {
    const { code, stderr } = await runDemo({ DEBUG: "" });
    expect(code).toBe(0);
    expect(stderr).toBe("");
  }, 40_000);
});
