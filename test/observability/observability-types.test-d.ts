/** The observability options take what users have: a pino-shaped logger, an OpenTelemetry tracer. */
import { trace } from "@opentelemetry/api";
import { describe, expectTypeOf, it } from "vitest";
import type { Logger, SessionOptions, TelemetryTracer } from "../../packages/toolrelay/src/index.js";

/** pino's log method, as its types declare it (overloads: object and message, or a message). */
interface PinoLogFn {
  <T extends object>(object: T, message?: string, ...args: unknown[]): void;
  (object: unknown, message?: string, ...args: unknown[]): void;
  (message: string, ...args: unknown[]): void;
}
interface PinoLikeLogger {
  level: string;
  trace: PinoLogFn;
  debug: PinoLogFn;
  info: PinoLogFn;
  warn: PinoLogFn;
  error: PinoLogFn;
  fatal: PinoLogFn;
  child(bindings: Record<string, unknown>): PinoLikeLogger;
}

describe("observability option types", () => {
  it("a pino logger is a Logger", () => {
    expectTypeOf<PinoLikeLogger>().toExtend<Logger>();
    expectTypeOf<PinoLikeLogger>().toExtend<NonNullable<SessionOptions["logger"]>>();
  });

  it("an OpenTelemetry tracer is a TelemetryTracer", () => {
    expectTypeOf(trace.getTracer("my-app")).toExtend<TelemetryTracer>();
    expectTypeOf(trace.getTracer("my-app")).toExtend<NonNullable<SessionOptions["tracer"]>>();
  });

  it("console fits too", () => {
    expectTypeOf(console).toExtend<Logger>();
  });
});
