import { describe, expect, it } from "vitest";
import { OwnRuntime } from "../../packages/toolrelay/src/session/own-runtime.js";

const mine = { agent_id: "a", conversation_id: "c" };

describe("OwnRuntime", () => {
  it("before runtime_start answers: the runtime the caller named is its own, any other is foreign", () => {
    const own = new OwnRuntime(mine);
    expect(own.classify(mine)).toEqual({ kind: "mine", scope: mine });
    expect(own.classify({ agent_id: "a", conversation_id: "other" })).toMatchObject({ kind: "foreign" });
    expect(own.classify(undefined)).toEqual({ kind: "mine", scope: mine });
  });

  it("creating a new agent or conversation: nothing is its own until runtime_start answers; an unscoped request is unscoped", () => {
    const own = new OwnRuntime(undefined);
    expect(own.classify(mine)).toEqual({ kind: "foreign", scope: mine });
    expect(own.classify(undefined)).toEqual({ kind: "unscoped" });
    own.scope = mine;
    expect(own.classify(mine)).toEqual({ kind: "mine", scope: mine });
    expect(own.classify(undefined)).toEqual({ kind: "mine", scope: mine });
  });

  it("reads a null agent (an agent-free conversation) as the empty agent id", () => {
    const own = new OwnRuntime({ agent_id: "", conversation_id: "c" });
    expect(own.classify({ agent_id: null, conversation_id: "c" })).toMatchObject({ kind: "mine" });
  });
});
