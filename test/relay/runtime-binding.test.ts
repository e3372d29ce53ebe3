import { describe, expect, it } from "vitest";
import { runtimeKeyOf } from "../../packages/relay/src/relay-frame.js";
import {
  admitsRuntime,
  bindingFromUrl,
  bindRuntime,
  boundTo,
  mergeBinding,
  OPEN_BINDING,
  refuseStart,
} from "../../packages/relay/src/runtime-binding.js";

const agentOnly = bindingFromUrl("agent-a", undefined);
const bound = bindingFromUrl("agent-a", "conv-1");

describe("runtime binding", () => {
  it("reads the URL: nothing, the agent alone (a new conversation), or the whole runtime", () => {
    expect(bindingFromUrl(undefined, undefined)).toEqual(OPEN_BINDING);
    expect(agentOnly).toEqual({ state: "agent", agentId: "agent-a" });
    expect(bound).toEqual({ state: "bound", agentId: "agent-a", conversationId: "conv-1", runtimeKey: runtimeKeyOf("agent-a", "conv-1") });
  });

  it("a reconnect URL may narrow the binding or repeat it, never change it", () => {
    expect(mergeBinding(OPEN_BINDING, bound)).toEqual(bound);
    expect(mergeBinding(agentOnly, bound)).toEqual(bound);
    expect(mergeBinding(bound, agentOnly)).toEqual(bound);
    expect(mergeBinding(bound, OPEN_BINDING)).toEqual(bound);
    expect(mergeBinding(bound, bindingFromUrl("agent-a", "conv-2"))).toBeUndefined();
    expect(mergeBinding(agentOnly, bindingFromUrl("agent-b", undefined))).toBeUndefined();
    expect(mergeBinding(agentOnly, bindingFromUrl("agent-b", "conv-1"))).toBeUndefined();
  });

  it("admits frames and commands of the bound runtime only", () => {
    expect(admitsRuntime(bound, runtimeKeyOf("agent-a", "conv-1"))).toBe(true);
    expect(admitsRuntime(bound, runtimeKeyOf("agent-a", "conv-2"))).toBe(false);
    expect(admitsRuntime(agentOnly, runtimeKeyOf("agent-a", "default"))).toBe(false);
    expect(admitsRuntime(OPEN_BINDING, runtimeKeyOf("agent-a", "conv-1"))).toBe(false);
  });

  it("lets a runtime_start create what the binding leaves open, and nothing else", () => {
    expect(refuseStart(OPEN_BINDING, undefined, undefined)).toBeUndefined();
    expect(refuseStart(agentOnly, "agent-a", undefined)).toBeUndefined();
    expect(refuseStart(agentOnly, undefined, undefined)).toMatch(/another agent/);
    expect(refuseStart(agentOnly, "agent-b", undefined)).toMatch(/another agent/);
    expect(refuseStart(bound, "agent-a", "conv-1")).toBeUndefined();
    expect(refuseStart(bound, "agent-a", undefined)).toMatch(/another conversation/);
    expect(refuseStart(bound, "agent-a", "conv-2")).toMatch(/another conversation/);
  });

  it("binds from the runtime a start's response names, unless it conflicts", () => {
    expect(bindRuntime(OPEN_BINDING, "agent-x", "conv-x")).toEqual(boundTo("agent-x", "conv-x"));
    expect(bindRuntime(agentOnly, "agent-a", "conv-new")).toEqual(boundTo("agent-a", "conv-new"));
    expect(bindRuntime(agentOnly, "agent-b", "conv-new")).toBeUndefined();
    expect(bindRuntime(bound, "agent-a", "conv-1")).toEqual(bound);
    expect(bindRuntime(bound, "agent-a", "conv-2")).toBeUndefined();
  });
});
