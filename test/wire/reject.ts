/** Test helper: the error `encodeFrame` throws for a frame (fails the test when it does not throw). */
import { expect } from "vitest";
import type { ToolrelayError } from "../../packages/toolrelay/src/errors.js";
import { encodeFrame, type OutboundFrame } from "../../packages/toolrelay/src/wire/index.js";

export function rejection(frame: unknown): ToolrelayError {
  try {
    encodeFrame(frame as OutboundFrame);
  } catch (error) {
    return error as ToolrelayError;
  }
  return expect.unreachable(`encodeFrame accepted ${JSON.stringify(frame)}`);
}

/** Asserts `encodeFrame` refuses the frame with INVALID_FRAME and a message containing `path`. */
export function expectRejected(frame: unknown, path: string): void {
  const error = rejection(frame);
  expect(error).toMatchObject({ code: "INVALID_FRAME" });
  expect(error.message).toContain(path);
}

/** Asserts `encodeFrame` accepts the frame. */
export function expectAccepted(frame: unknown): void {
  expect(() => encodeFrame(frame as OutboundFrame)).not.toThrow();
}
