/**
 * docs/protocol.md#runtime_external_tools_update / docs/protocol.md#silent-drops: a `runtime_external_tools_update` the runtime would
 * drop silently is refused by encodeFrame.
 */
import { describe, it } from "vitest";
import { expectAccepted, expectRejected } from "./reject.js";
import { fixture } from "./load-fixtures.js";

// biome-ignore lint/suspicious/noExplicitAny: a test reads a decoded frame's nested fields without declaring every shape
type Frame = Record<string, any>;
const update = (): Frame => fixture("wire/outbound", "runtime-external-tools-update");

describe("runtime_external_tools_update", () => {
  it("accepts an empty updates list and an update that removes tools ([])", () => {
    const frame = update();
    frame.updates = [];
    expectAccepted(frame);
    expectAccepted(update());
  });

  it("rejects an update with an empty runtimes array", () => {
    const frame = update();
    frame.updates[0].runtimes = [];
    expectRejected(frame, "updates[0].runtimes: Too small");
  });

  it("rejects an invalid runtime (empty agent_id)", () => {
    const frame = update();
    frame.updates[0].runtimes[0].agent_id = "";
    expectRejected(frame, "updates[0].runtimes[0].agent_id");
  });

  it("rejects an invalid runtime (missing conversation_id)", () => {
    const frame = update();
    delete frame.updates[1].runtimes[0].conversation_id;
    expectRejected(frame, "updates[1].runtimes[0].conversation_id");
  });

  it("rejects a runtime whose agent_id is null (the update needs agent runtimes)", () => {
    const frame = update();
    frame.updates[0].runtimes[0].agent_id = null;
    expectRejected(frame, "updates[0].runtimes[0].agent_id");
  });

  it("rejects a malformed tool group", () => {
    const frame = update();
    frame.updates[0].external_tools[0].tools[0].parameters = "none";
    expectRejected(frame, "updates[0].external_tools[0].tools[0].parameters");
  });

  it("rejects an update without external_tools", () => {
    const frame = update();
    delete frame.updates[1].external_tools;
    expectRejected(frame, "updates[1].external_tools");
  });

  it("rejects the same agent_id:conversation_id twice across updates", () => {
    const frame = update();
    frame.updates[1].runtimes.push({ ...frame.updates[0].runtimes[0] });
    expectRejected(frame, "updates[1].runtimes[1]: the same runtime appears twice in one update frame");
  });

  it("rejects the same runtime twice within one update", () => {
    const frame = update();
    frame.updates[0].runtimes.push({ ...frame.updates[0].runtimes[1] });
    expectRejected(frame, "updates[0].runtimes[2]: the same runtime appears twice");
  });

  it("rejects updates that is not an array", () => {
    const frame = update();
    frame.updates = frame.updates[0];
    expectRejected(frame, "updates: Invalid input: expected array");
  });

  it("rejects a missing request_id", () => {
    const frame = update();
    delete frame.request_id;
    expectRejected(frame, "request_id");
  });
});
