/** A call journal record in state `started`, as the call table writes one (tests of the journals). */
import type { JournalEntry } from "../../packages/toolrelay/src/calls/index.js";

export function startedEntry(key: string, startedAt = 0): JournalEntry {
  return {
    key,
    state: "started",
    toolName: "pay",
    agentId: "agent-1",
    conversationId: "conv-1",
    toolCallId: `call_${key}`,
    inputSha256: "sha",
    startedAt,
  };
}
