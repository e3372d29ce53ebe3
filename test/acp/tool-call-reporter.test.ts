import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { describe, expect, it } from "vitest";
import { bufferHash, countLines, hashMatches, sliceLines } from "../../packages/toolrelay/src/acp/editor-buffer.js";
import { presentToolCall } from "../../packages/toolrelay/src/acp/tool-call-presentation.js";
import { ToolCallReporter } from "../../packages/toolrelay/src/acp/tool-call-reporter.js";

function reporter(maxContentChars?: number) {
  const sent: SessionUpdate[] = [];
  const instance = new ToolCallReporter({ send: (update) => sent.push(update), present: presentToolCall, maxContentChars });
  const statuses = () => sent.map((update) => `${update.sessionUpdate}:${"status" in update ? (update.status ?? "-") : "-"}`);
  return { instance, sent, statuses };
}

describe("ToolCallReporter", () => {
  it("client tool: tool_call pending → in_progress → completed; the later tool-result changes nothing", () => {
    const { instance, sent, statuses } = reporter();
    instance.called("c1", "read_editor_buffer", { path: "/w/a.ts", line: 3 });
    instance.started("c1", "read_editor_buffer");
    instance.ended("c1", "read_editor_buffer", { kind: "ok", content: [{ type: "text", text: "file text" }] });
    instance.resulted("c1", "read_editor_buffer", false, "file text");
    expect(statuses()).toEqual(["tool_call:pending", "tool_call_update:in_progress", "tool_call_update:completed"]);
    expect(sent[0]).toEqual({
      sessionUpdate: "tool_call",
      toolCallId: "c1",
      name: "read_editor_buffer",
      title: "Read /w/a.ts (editor buffer)",
      kind: "read",
      status: "pending",
      rawInput: { path: "/w/a.ts", line: 3 },
      locations: [{ path: "/w/a.ts", line: 3 }],
    });
    expect(sent[2]).toMatchObject({ content: [{ type: "content", content: { type: "text", text: "file text" } }] });
  });

  it("a start that arrives before the call: announced from the start, the input filled in later", () => {
    const { instance, sent, statuses } = reporter();
    instance.started("c2", "write_via_editor");
    instance.called("c2", "write_via_editor", { path: "/w/b.ts", content: "x" });
    instance.ended("c2", "write_via_editor", {
      kind: "tool-error",
      message: "changed since you read it",
      content: [{ type: "text", text: "changed since you read it" }],
    });
    expect(statuses()).toEqual(["tool_call:pending", "tool_call_update:in_progress", "tool_call_update:-", "tool_call_update:failed"]);
    expect(sent[2]).toMatchObject({
      title: "Write /w/b.ts (through the editor)",
      kind: "edit",
      rawInput: { path: "/w/b.ts", content: "x" },
    });
    expect(sent[3]).toMatchObject({ content: [{ content: { text: "changed since you read it" } }] });
  });

  it("outcomes other than ok fail with the text the runtime got (invalid input, cancelled)", () => {
    const { instance, sent } = reporter();
    instance.called("c3", "read_editor_buffer", { path: "../x" });
    instance.ended("c3", "read_editor_buffer", { kind: "invalid-input", issues: [{ path: "path", message: "the path must be absolute" }] });
    instance.called("c4", "read_editor_buffer", { path: "/w/slow" });
    instance.started("c4", "read_editor_buffer");
    instance.ended("c4", "read_editor_buffer", { kind: "cancelled", reason: "the turn was aborted" });
    expect(sent[1]).toMatchObject({
      status: "failed",
      content: [{ content: { text: expect.stringContaining("path: the path must be absolute") } }],
    });
    expect(sent.at(-1)).toMatchObject({ status: "failed", content: [{ content: { text: "Tool call cancelled: the turn was aborted" } }] });
  });

  it("runtime tool: pending → completed / failed from the tool result", () => {
    const { instance, sent, statuses } = reporter();
    instance.called("r1", "Bash", { command: "ls -la" });
    instance.resulted("r1", "Bash", true, "denied");
    expect(statuses()).toEqual(["tool_call:pending", "tool_call_update:failed"]);
    expect(sent[0]).toMatchObject({ title: "Bash: ls -la", kind: "execute" });
  });

  it("statuses never go back; finishOpen fails only the open calls", () => {
    const { instance, statuses } = reporter();
    instance.called("a", "x", {});
    instance.ended("a", "x", { kind: "ok", content: [] });
    instance.started("a", "x");
    instance.called("b", "y", {});
    instance.called("c", "z", {});
    instance.started("c", "z");
    instance.finishOpen("Cancelled: the prompt was cancelled.");
    expect(statuses()).toEqual([
      "tool_call:pending",
      "tool_call_update:completed",
      "tool_call:pending",
      "tool_call:pending",
      "tool_call_update:in_progress",
      "tool_call_update:failed",
      "tool_call_update:failed",
    ]);
    expect(instance.statusOf("a")).toBe("completed");
    expect(instance.statusOf("b")).toBe("failed");
  });

  it("long results are cut for the editor, saying so", () => {
    const { instance, sent } = reporter(10);
    instance.called("l", "x", {});
    instance.resulted("l", "x", false, "0123456789abcdef");
    expect(sent[1]).toMatchObject({
      content: [{ content: { text: "0123456789\n… (6 more characters not shown here; the model received them all)" } }],
    });
  });
});

describe("editor buffer helpers", () => {
  it("hash: 16 hex of SHA-256; prefix match of 16 to 64 characters, any case", () => {
    expect(bufferHash("")).toBe("e3b0c44298fc1c14");
    expect(bufferHash("a")).not.toBe(bufferHash("a\n"));
    expect(hashMatches("E3B0C44298FC1C14", "")).toBe(true);
    expect(hashMatches("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "")).toBe(true);
    expect(hashMatches("e3b0c44298fc1c1", "")).toBe(false);
    expect(hashMatches("e3b0c44298fc1c15", "")).toBe(false);
    expect(hashMatches("zzzzzzzzzzzzzzzz", "")).toBe(false);
  });

  it("slices lines like fs/read_text_file (1-based line, limit)", () => {
    expect(sliceLines("a\nb\nc", 2)).toEqual({ text: "b\nc", startLine: 2, endLine: 3, totalLines: 3 });
    expect(sliceLines("a\nb\nc\n", 1, 1)).toEqual({ text: "a\n", startLine: 1, endLine: 1, totalLines: 3 });
    expect(sliceLines("", 1)).toEqual({ text: "", startLine: 1, endLine: 0, totalLines: 0 });
    expect(sliceLines("a\r\nb\r\n", 2)).toEqual({ text: "b\r\n", startLine: 2, endLine: 2, totalLines: 2 });
    expect(countLines("a\nb")).toBe(2);
    expect(countLines("a\nb\n")).toBe(2);
  });
});
