/**
 * Which calls the scripted runtime asks about (`can_use_tool`) in each permission mode, as the
 * real runtime (Letta Code 0.32.18) does: nothing in `unrestricted`, everything in `strict`, and
 * in `standard` / `acceptEdits` every client tool call and every runtime call except the
 * read-only ones (`echo hi`, `Read` were auto-allowed by the real app-server in `standard`).
 */
import { afterEach, describe, expect, it } from "vitest";
import { isReadOnlyShellCommand, runsUnasked } from "../../packages/toolrelay/src/testing/scripted-auto-approval.js";
import { startScriptedRuntime, type ScriptedPermissionMode, type ScriptedRuntime } from "../../packages/toolrelay/src/testing/index.js";
import { connectClient, inputFrame, startFrame, terminateClients, type Frame } from "./scripted-runtime-test-client.js";

let runtime: ScriptedRuntime | undefined;

afterEach(async () => {
  terminateClients();
  await runtime?.close();
  runtime = undefined;
});

/** The runtime calls of the turn below, by tool call id. */
const RUNTIME_CALLS: Record<string, { name: string; input: Record<string, unknown> }> = {
  echo: { name: "Bash", input: { command: "echo hi" } },
  ls: { name: "Bash", input: { command: "ls -la src" } },
  touch: { name: "Bash", input: { command: "touch made-by-the-model.txt" } },
  redirect: { name: "Bash", input: { command: "echo hi > made-by-the-model.txt" } },
  outside: { name: "Bash", input: { command: "cat /etc/passwd" } },
  read: { name: "Read", input: { file_path: "README.md" } },
  write: { name: "Write", input: { file_path: "notes.txt", content: "x" } },
};

/**
 * One turn in `mode` (named by runtime_start): every runtime call above, then the client tool
 * `get_weather`; the client allows whatever it is asked. Returns the tool call ids asked about,
 * in order, and the classification the runtime announced for each step.
 */
async function askedIn(mode: ScriptedPermissionMode): Promise<{ asked: string[]; classified: Frame[] }> {
  runtime = await startScriptedRuntime({
    script: async (turn) => {
      for (const [id, call] of Object.entries(RUNTIME_CALLS)) {
        const result = await turn.runBuiltinTool(call.name, call.input, `${id} ran`, { toolCallId: id, stream: false });
        expect(result.toolReturn).toBe(`${id} ran`);
      }
      const result = await turn.callTool("get_weather", { city: "Oslo" }, { toolCallId: "client" });
      expect(result.toolReturn).toBe("sunny");
    },
  });
  const client = await connectClient(runtime.url);
  client.send(startFrame("rs-1", [{ name: "get_weather" }], { mode }));
  const scope = (await client.waitFor((frame) => frame.request_id === "rs-1")).runtime as Frame;
  const asked: string[] = [];
  let answered = 0;
  client.send(inputFrame("in-1", scope, "go"));
  for (;;) {
    const frame = await client.waitFor(
      (each) =>
        each.type === "turn_finished" ||
        (each.type === "control_request" && !asked.includes(each.request.tool_call_id)) ||
        (each.type === "external_tool_call_request" && answered === 0),
    );
    if (frame.type === "turn_finished") break;
    if (frame.type === "control_request") {
      asked.push(frame.request.tool_call_id);
      client.send({
        type: "input",
        request_id: `ap-${frame.request_id}`,
        runtime: scope,
        payload: { kind: "approval_response", request_id: frame.request_id, decision: { behavior: "allow" } },
      });
    } else {
      answered++;
      client.send({
        type: "external_tool_call_response",
        request_id: frame.request_id,
        result: { content: [{ type: "text", text: "sunny" }] },
      });
    }
  }
  const classified = client.frames
    .filter((frame) => frame.type === "stream_delta" && frame.delta.message_type === "approval_classification_end")
    .map((frame) => frame.delta);
  await runtime.close();
  runtime = undefined;
  return { asked, classified };
}

describe("scripted runtime: what each permission mode asks about", () => {
  it("strict asks about every call, runtime and client", async () => {
    const { asked } = await askedIn("strict");
    expect(asked).toEqual([...Object.keys(RUNTIME_CALLS), "client"]);
  });

  it("unrestricted asks about nothing", async () => {
    const { asked, classified } = await askedIn("unrestricted");
    expect(asked).toEqual([]);
    expect(classified.flatMap((delta) => delta.user_input_tool_call_ids)).toEqual([]);
  });

  it("standard runs the read-only runtime calls unasked (echo hi, ls, Read) and asks about the rest and every client call", async () => {
    const { asked, classified } = await askedIn("standard");
    expect(asked).toEqual(["touch", "redirect", "outside", "write", "client"]);
    // The classification delta says the same, call by call (as the real runtime's does).
    expect(classified.flatMap((delta) => delta.auto_allowed_tool_call_ids)).toEqual(["echo", "ls", "read"]);
    expect(classified.flatMap((delta) => delta.user_input_tool_call_ids)).toEqual(asked);
  });

  it("acceptEdits runs file edits unasked too; a shell command that writes is still asked", async () => {
    const { asked } = await askedIn("acceptEdits");
    expect(asked).toEqual(["touch", "redirect", "outside", "client"]);
  });
});

describe("scripted runtime: the read-only rule (narrow on purpose)", () => {
  it.each([
    ["echo hi", true],
    ['echo "hello world"', true],
    ["pwd", true],
    ["ls", true],
    ["cat notes.txt", true],
    ["cat ../secret", false],
    ["cat '/etc/passwd'", false],
    ["ls ~", false],
    ["echo hi; rm -rf x", false],
    ["echo hi | tee x", false],
    ["echo $(rm x)", false],
    ["echo `rm x`", false],
    ["echo hi > x", false],
    ["rm x", false],
    ["git status", false],
    ["", false],
  ])("Bash %j is read-only: %s", (command, readOnly) => {
    expect(isReadOnlyShellCommand(command)).toBe(readOnly);
  });

  it("a client tool is asked in every mode but unrestricted; strict asks even about Read", () => {
    for (const mode of ["standard", "acceptEdits", "strict"] as const) {
      expect(runsUnasked(mode, "client", "get_weather", {})).toBe(false);
    }
    expect(runsUnasked("unrestricted", "client", "get_weather", {})).toBe(true);
    expect(runsUnasked("strict", "runtime", "Read", {})).toBe(false);
    expect(isReadOnlyShellCommand(42)).toBe(false);
  });
});
