import { describe, expect, it } from "vitest";
import { classifyInbound } from "../../packages/toolrelay/src/transport/cloud-delivery.js";
import { IdempotencyKeyCache } from "../../packages/toolrelay/src/transport/idempotency-key-cache.js";

describe("classifyInbound", () => {
  it("drops a stream_delta on control, forwards it on stream", () => {
    const keys = new IdempotencyKeyCache();
    expect(classifyInbound("control", "stream_delta", {}, keys)).toBe("control-stream-delta");
    expect(classifyInbound("stream", "stream_delta", {}, keys)).toBe("forward");
  });

  it("drops a repeated idempotency key, whichever socket it came on", () => {
    const keys = new IdempotencyKeyCache();
    expect(classifyInbound("stream", "update_loop_status", { idempotency_key: "k-1" }, keys)).toBe("forward");
    expect(classifyInbound("control", "turn_finished", { idempotency_key: "k-1" }, keys)).toBe("duplicate");
    expect(classifyInbound("control", "external_tool_call_request", {}, keys)).toBe("forward");
  });
});
