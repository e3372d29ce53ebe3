import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../packages/toolrelay/src/openai/chat-request.js";
import { requestTail } from "../../packages/toolrelay/src/openai/request-tail.js";
import { EMPTY_TRANSCRIPT, TranscriptFingerprints } from "../../packages/toolrelay/src/openai/transcript-fingerprint.js";
import { buildTurnInput, renderHistory } from "../../packages/toolrelay/src/openai/turn-input.js";

const user = (text: string): ChatMessage => ({ role: "user", parts: [{ type: "text", text }] });
const NUDGE = "call the client's tools";
const context = { changedSystem: undefined, lateResults: [], nudge: NUDGE, maxHistoryChars: 10_000 };

function texts(input: ReturnType<typeof buildTurnInput>): string[] {
  if (input === undefined || typeof input === "string") throw new Error("expected parts");
  return input.map((part) => (part.type === "text" ? part.text : "[image]"));
}

function tailOf(messages: ChatMessage[]) {
  return requestTail(new TranscriptFingerprints(messages), EMPTY_TRANSCRIPT, undefined).tail;
}

describe("buildTurnInput", () => {
  it("a new user message gets the nudge, before the user's own text", () => {
    expect(texts(buildTurnInput(tailOf([user("read a")]), context))).toEqual([`<system-reminder>\n${NUDGE}\n</system-reminder>`, "read a"]);
  });

  it("a request that brings a tool result gets no nudge, even with a user message beside it", () => {
    const tail = tailOf([
      { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "read_file", arguments: "{}" }] },
      { role: "tool", toolCallId: "c1", text: "R", name: undefined },
      user("and?"),
    ]);
    const input = texts(buildTurnInput(tail, { ...context, lateResults: [{ toolCallId: "c1", name: "read_file", text: "R" }] }));
    expect(input.some((part) => part.includes(NUDGE))).toBe(false);
    expect(input).toContain("Result of your earlier call to read_file (id c1), which the client sent after the call had ended:\nR");
    expect(input.at(-1)).toBe("and?");
  });

  it("results in the history (an earlier request's) leave the nudge in place", () => {
    const messages: ChatMessage[] = [
      user("read a"),
      { role: "assistant", text: "", toolCalls: [{ id: "c1", name: "read_file", arguments: "{}" }] },
      { role: "tool", toolCallId: "c1", text: "A", name: undefined },
      { role: "assistant", text: "A it is", toolCalls: [] },
      user("now b"),
    ];
    expect(texts(buildTurnInput(tailOf(messages), context)).some((part) => part.includes(NUDGE))).toBe(true);
  });

  it("the system message when it changed, images as image parts; nothing for the agent: undefined", () => {
    const tail = tailOf([
      {
        role: "user",
        parts: [
          { type: "image", url: "data:image/png;base64,QUJD" },
          { type: "image", url: "https://example.test/a.png" },
        ],
      },
    ]);
    const input = buildTurnInput(tail, { ...context, nudge: undefined, changedSystem: "be brief" });
    expect(input).toEqual([
      { type: "text", text: "<system-reminder>\nThe chat client's instructions (its system message):\nbe brief\n</system-reminder>" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "QUJD" } },
      { type: "image", source: { type: "url", url: "https://example.test/a.png" } },
    ]);
    const nothing = { messages: [], history: [], toolResults: [], userParts: [], clientAssistantTexts: [], system: undefined };
    expect(buildTurnInput(nothing, context)).toBeUndefined();
  });
});

describe("renderHistory", () => {
  it("keeps the newest messages within the budget and says how many were left out", () => {
    const messages = Array.from({ length: 50 }, (_, index) => user(`message number ${index}`));
    const rendered = renderHistory(messages, 100);
    expect(rendered.length).toBeLessThanOrEqual(140);
    expect(rendered).toMatch(/^\[\d+ earlier messages omitted\]/);
    expect(rendered.endsWith("[user] message number 49")).toBe(true);
  });
});
