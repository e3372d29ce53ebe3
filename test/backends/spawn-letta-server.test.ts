/**
 * `spawn` without the command on PATH (issue 24): a clear SPAWN_FAILED naming the command and
 * pointing at docs/getting-started.md, not a bare `spawn letta ENOENT`.
 */
import { describe, expect, it } from "vitest";
import { spawnLettaServer } from "../../packages/toolrelay/src/backends/spawn-letta-server.js";
import { createSession, isToolrelayError } from "../../packages/toolrelay/src/index.js";

describe("spawn without the command", () => {
  it("the default `letta` missing from PATH: names the Letta Code CLI, points at docs/getting-started.md and spawn.command", async () => {
    const error = await spawnLettaServer({ env: { PATH: "/nonexistent-toolrelay-path" } }).catch((caught: unknown) => caught);
    expect(isToolrelayError(error, "SPAWN_FAILED")).toBe(true);
    expect((error as Error).message).toBe(
      "cannot start the Letta Code CLI (`letta`): it was not found (spawn letta ENOENT; looked up on PATH). " +
        "Install Letta Code as docs/getting-started.md shows, or name the command to run with `spawn: { command, commandArgs }`",
    );
    expect(error).toMatchObject({ details: { command: "letta", errno: "ENOENT" }, cause: { code: "ENOENT" } });
  });

  it("through createSession, a command of the caller's that does not exist is named as given", async () => {
    const error = await createSession({
      backend: { kind: "local", spawn: { command: "letta-toolrelay-missing" } },
      agent: { id: "agent-x" },
    }).catch((caught: unknown) => caught);
    expect(isToolrelayError(error, "SPAWN_FAILED")).toBe(true);
    expect((error as Error).message).toMatch(
      /^cannot start `letta-toolrelay-missing`: it was not found \(spawn letta-toolrelay-missing ENOENT/,
    );
    expect((error as Error).message).toContain("docs/getting-started.md");
  });
});
