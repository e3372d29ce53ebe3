import { describe, expect, it } from "vitest";
import type { ChatTool } from "../../packages/toolrelay/src/openai/chat-request.js";
import { ClientCalls } from "../../packages/toolrelay/src/openai/client-calls.js";

const readFile: ChatTool = {
  name: "read_file",
  declaredName: "functions.read_file",
  description: undefined,
  parameters: { type: "object" },
};

describe("ClientCalls", () => {
  it("calls announced together are returned together; the second one's result is held until the runtime asks", async () => {
    const calls = new ClientCalls();
    calls.announce("call_0", readFile, { path: "a" });
    calls.announce("call_1", readFile, { path: "b" });
    const first = calls.request("call_0", readFile, { path: "a" });
    expect(first.waiting).toBe(true);
    expect(calls.waitingUnreturned).toBe(1);
    const returned = calls.takeUnreturned();
    expect(returned.map((call) => [call.name, call.arguments])).toEqual([
      ["functions.read_file", '{"path":"a"}'],
      ["functions.read_file", '{"path":"b"}'],
    ]);
    expect(returned[0]!.id).not.toBe(returned[1]!.id);
    expect(calls.outstanding).toEqual(returned.map((call) => call.id));
    expect(calls.deliver(returned[0]!.id, "A")).toBe("delivered");
    expect(calls.deliver(returned[1]!.id, "B")).toBe("delivered");
    await expect(first.result).resolves.toBe("A");
    // The runtime asks for the second only now: it gets the held result at once.
    const second = calls.request("call_1", readFile, { path: "b" });
    expect(second.waiting).toBe(false);
    await expect(second.result).resolves.toBe("B");
    expect(calls.outstanding).toEqual([]);
  });

  it("a result for a call that ended (timed out) is late; an id it never gave out is unknown; names stay known after the turn", async () => {
    const calls = new ClientCalls();
    const pending = calls.request("call_0", readFile, {});
    const [returned] = calls.takeUnreturned();
    calls.abandon(returned!.id, "timeout");
    await expect(pending.result).resolves.toBe(""); // nothing waits on it forever
    expect(calls.deliver(returned!.id, "too late")).toBe("late");
    expect(calls.deliver("call_never", "x")).toBe("unknown");
    calls.clear();
    expect(calls.deliver(returned!.id, "later still")).toBe("late");
    expect(calls.nameOf(returned!.id)).toBe("read_file");
  });

  it("a reused runtime tool_call_id after the first call ended is a new call with a new id", () => {
    const calls = new ClientCalls();
    calls.request("call_0", readFile, {});
    const [first] = calls.takeUnreturned();
    calls.deliver(first!.id, "one");
    calls.request("call_0", readFile, {});
    const [second] = calls.takeUnreturned();
    expect(second!.id).not.toBe(first!.id);
  });

  it("a call the runtime answered itself, never asking for it, is over: the client's result for it is dropped and a reused id is a new call", async () => {
    const calls = new ClientCalls();
    // One model response: call_0 (the runtime will refuse it: a required argument is missing) and call_1.
    calls.announce("call_0", readFile, {});
    calls.announce("call_1", readFile, { path: "b" });
    const asked = calls.request("call_1", readFile, { path: "b" });
    const returned = calls.takeUnreturned();
    expect(returned.map((call) => call.arguments)).toEqual(["{}", '{"path":"b"}']);
    expect(calls.deliver(returned[0]!.id, "for the refused call")).toBe("delivered"); // held: not asked yet
    expect(calls.deliver(returned[1]!.id, "B")).toBe("delivered");
    await expect(asked.result).resolves.toBe("B");
    calls.resultReported("call_1"); // a call it asked for: already over
    calls.resultReported("call_0"); // its own refusal: call_0 is over
    expect(calls.endedByRuntime(returned[0]!.id)).toBe(true);
    expect(calls.endedByRuntime(returned[1]!.id)).toBe(false);
    // The model's next response reuses call_0: a new call, with its own arguments, for the client.
    const reused = calls.request("call_0", readFile, { path: "a" });
    expect(reused.waiting).toBe(true);
    expect(calls.takeUnreturned()).toEqual([{ id: reused.id, name: "functions.read_file", arguments: '{"path":"a"}' }]);
    expect(calls.deliver(reused.id, "A")).toBe("delivered");
    await expect(reused.result).resolves.toBe("A");
    expect(calls.deliver(returned[0]!.id, "sent again")).toBe("dropped");
    calls.clear();
    expect(calls.deliver(returned[0]!.id, "in a later turn")).toBe("dropped");
    expect(calls.deliver(reused.id, "in a later turn")).toBe("late");
  });
});
