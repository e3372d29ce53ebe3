/** The call table's one output is typed: each report carries what it is about, and nothing is cast. */
import { describe, expectTypeOf, it } from "vitest";
import type { CallOutcome, CallRecord, CallTableOutput } from "../../packages/toolrelay/src/calls/index.js";
import type { ToolCallResponseBody } from "../../packages/toolrelay/src/wire/index.js";

describe("CallTableOutput", () => {
  it("gives a response its body and returns the epoch it went out on, or undefined when held", () => {
    expectTypeOf<CallTableOutput["response"]>().parameters.toEqualTypeOf<[CallRecord | undefined, string, ToolCallResponseBody]>();
    expectTypeOf<CallTableOutput["response"]>().returns.toEqualTypeOf<number | undefined>();
  });

  it("gives a late report its outcome and a progress report its message; start and end the record only", () => {
    expectTypeOf<CallTableOutput["late"]>().parameters.toEqualTypeOf<[CallRecord, string, CallOutcome]>();
    expectTypeOf<CallTableOutput["progress"]>().parameters.toEqualTypeOf<[CallRecord, string, string]>();
    expectTypeOf<CallTableOutput["start"]>().parameters.toEqualTypeOf<[CallRecord, string]>();
    expectTypeOf<CallTableOutput["end"]>().parameters.toEqualTypeOf<[CallRecord, string]>();
  });

  it("is an object of methods, not one callback taking an unknown detail", () => {
    expectTypeOf<CallTableOutput>().not.toBeFunction();
    // @ts-expect-error a report's detail is no longer `unknown`
    const untyped: CallTableOutput = (_kind: string, _record: unknown, _requestId: string, _detail?: unknown) => undefined;
    void untyped;
  });
});
