/**
 * The thread inbox on its own, fed by a real {@link Turn}: a reader whose client went away stops
 * at once and takes nothing (what it leaves is there for the next reader); the calls are told
 * what the turn reports as it comes, with no reader; and a tool call id the model reuses is a new
 * call whose result has not been seen yet.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { systemTimers } from "../../packages/toolrelay/src/internal/timers.js";
import { ClientCalls } from "../../packages/toolrelay/src/openai/client-calls.js";
import { ClientToolSet } from "../../packages/toolrelay/src/openai/client-tool-set.js";
import { ThreadInbox } from "../../packages/toolrelay/src/openai/thread-inbox.js";
import { Turn } from "../../packages/toolrelay/src/session/turn.js";
import { until } from "../support/wait.js";

const call = (toolCallId: string, path: string) =>
  ({ type: "tool-call", toolCallId, toolName: "read_file", input: { path }, owner: "client" }) as const;
const result = (toolCallId: string, text: string) =>
  ({ type: "tool-result", toolCallId, toolName: "read_file", isError: false, text, owner: "client" }) as const;

afterEach(() => {
  vi.useRealTimers();
});

/** A turn pumped into a new inbox, with the thread's calls and the client's one tool, read_file. */
function pumped(): { turn: Turn; inbox: ThreadInbox; calls: ClientCalls } {
  const turn = Turn.create(async () => undefined);
  const calls = new ClientCalls();
  const tools = new ClientToolSet(async () => "", 60_000);
  tools.update([{ name: "read_file", declaredName: "read_file", description: undefined, parameters: { type: "object" } }]);
  return { turn, inbox: ThreadInbox.of(turn, calls, tools), calls };
}

describe("ThreadInbox", () => {
  it("a reader whose signal aborts stops waiting and takes nothing: the next item goes to the next reader", async () => {
    const { turn, inbox } = pumped();
    const gone = new AbortController();
    const waiting = inbox.next(gone.signal);
    gone.abort();
    await expect(waiting).resolves.toBeUndefined();
    turn.push({ type: "assistant", text: "for the next reader", messageId: undefined });
    await expect(inbox.next(new AbortController().signal)).resolves.toMatchObject({
      kind: "event",
      event: { type: "assistant", text: "for the next reader" },
    });
    await expect(inbox.next(gone.signal)).resolves.toBeUndefined();
  });

  it("a reused tool call id: the first call's result does not count as the second's", async () => {
    vi.useFakeTimers();
    const { turn, inbox } = pumped();
    turn.push(call("call_0", "a"));
    turn.push(result("call_0", "A"));
    turn.push(call("call_0", "b"));
    await vi.advanceTimersByTimeAsync(0);
    let seen = false;
    void inbox.toolResultSeen("call_0", systemTimers, 5_000).then(() => {
      seen = true;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(seen).toBe(false);
    turn.push(result("call_0", "B"));
    await vi.advanceTimersByTimeAsync(0);
    expect(seen).toBe(true);
  });

  it("the calls hear of the model's calls and the runtime's results as the turn reports them, with no reader", async () => {
    const { turn, calls } = pumped();
    turn.push(call("call_0", "a"));
    turn.push({ ...call("call_1", "x"), toolName: "Bash", owner: "runtime" });
    await until(() => calls.takeUnreturned().length === 1, "the announced client call");
    // The runtime answered call_0 itself (it never asked the client): the call is over.
    turn.push(result("call_0", "read_file tool missing required parameter: path"));
    await until(() => calls.outstanding.length === 0, "call_0 ended by the runtime's own result");
  });
});
