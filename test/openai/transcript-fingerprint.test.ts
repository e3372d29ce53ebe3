import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../packages/toolrelay/src/openai/chat-request.js";
import { requestTail } from "../../packages/toolrelay/src/openai/request-tail.js";
import { EMPTY_TRANSCRIPT, TranscriptFingerprints } from "../../packages/toolrelay/src/openai/transcript-fingerprint.js";

const user = (text: string): ChatMessage => ({ role: "user", parts: [{ type: "text", text }] });
const assistant = (text: string, calls: Array<[string, string]> = []): ChatMessage => ({
  role: "assistant",
  text,
  toolCalls: calls.map(([id, name]) => ({ id, name, arguments: "{}" })),
});
const tool = (id: string, text: string): ChatMessage => ({ role: "tool", toolCallId: id, text, name: undefined });
const system = (text: string): ChatMessage => ({ role: "system", text });

/** The fingerprint a thread keeps after it produced the last of `messages`. */
function transcriptOf(messages: ChatMessage[]): string {
  return new TranscriptFingerprints(messages.slice(0, -1)).extendedBy(messages.at(-1)!);
}

const fingerprintTranscript = (messages: ChatMessage[]) => new TranscriptFingerprints(messages);

describe("transcript fingerprints", () => {
  it("forgive what clients change when they echo a transcript: white space, part splits, system messages, narration beside tool calls", () => {
    const produced = [user("read a"), assistant("Let me read it.", [["call_1", "read_file"]])];
    const echoed: ChatMessage[] = [
      system("you are helpful (rewritten every request)"),
      {
        role: "user",
        parts: [
          { type: "text", text: "read" },
          { type: "text", text: " a  " },
        ],
      },
      { role: "assistant", text: "", toolCalls: [{ id: "call_1", name: "read_file", arguments: '{ "path" : "a" }' }] },
      tool("call_1", "A"),
    ];
    const fingerprints = fingerprintTranscript(echoed);
    expect(fingerprints.messages).toHaveLength(3);
    expect(fingerprints.prefixes[1]).toBe(transcriptOf(produced));
    // Only prefixes that end with an answer are fingerprinted: a transcript always ends with one.
    expect(fingerprints.prefixes[0]).toBeUndefined();
    expect(fingerprints.prefixes[2]).toBeUndefined();
  });

  it("tell apart what matters: another text, another call id, another result", () => {
    const base = transcriptOf([user("hi"), assistant("hello")]);
    expect(transcriptOf([user("hi"), assistant("hello!")])).not.toBe(base);
    expect(transcriptOf([user("hi!"), assistant("hello")])).not.toBe(base);
    expect(transcriptOf([user("x"), assistant("", [["call_1", "f"]])])).not.toBe(
      transcriptOf([user("x"), assistant("", [["call_2", "f"]])]),
    );
    expect(transcriptOf([tool("c", "1")])).not.toBe(transcriptOf([tool("c", "2")]));
  });
});

describe("requestTail", () => {
  const history = [user("one"), assistant("first answer"), user("two")];

  it("a known transcript: the new messages are what follows it", () => {
    const fingerprints = fingerprintTranscript(history);
    const { tail, matched } = requestTail(fingerprints, transcriptOf(history.slice(0, 2)), undefined);
    expect(matched).toBe(1);
    expect(tail.messages).toEqual([user("two")]);
    expect(tail.history).toEqual([]);
    expect(tail.userParts).toEqual([{ type: "text", text: "two" }]);
  });

  it("a new thread: the messages after the last assistant message are new, the ones before are history", () => {
    const { tail, matched } = requestTail(
      fingerprintTranscript([...history, assistant("", [["c1", "f"]]), tool("c1", "R"), user("three")]),
      EMPTY_TRANSCRIPT,
      "sys",
    );
    expect(matched).toBe(-1);
    expect(tail.messages).toEqual([tool("c1", "R"), user("three")]);
    expect(tail.toolResults).toEqual([{ toolCallId: "c1", text: "R", name: undefined }]);
    expect(tail.history).toHaveLength(4);
    expect(tail.system).toBe("sys");
  });

  it("a keyed thread whose transcript is not a prefix (an edited history): new messages only, no history replayed", () => {
    const { tail, matched } = requestTail(
      fingerprintTranscript(history),
      transcriptOf([user("something else"), assistant("x")]),
      undefined,
    );
    expect(matched).toBe(-1);
    expect(tail.messages).toEqual([user("two")]);
    expect(tail.history).toEqual([]);
  });
});
