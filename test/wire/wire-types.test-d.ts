/** Type-level contract of wire/ (checked by vitest typecheck). */
import { describe, expectTypeOf, it } from "vitest";
import type {
  DecodedFrame,
  ExternalToolCallResponseFrame,
  ExternalToolDefinition,
  ExternalToolsGroup,
  FrameEnvelope,
  InboundFrame,
  InputFrame,
  OutboundFrame,
  RuntimeScope,
  StreamDelta,
  ToolCallResponseBody,
  WireContentBlock,
} from "../../packages/toolrelay/src/wire/index.js";
import { decodeFrame, encodeFrame, isKnownStreamDelta } from "../../packages/toolrelay/src/wire/index.js";

describe("wire types", () => {
  it("match the shared contract", () => {
    expectTypeOf<WireContentBlock>().toEqualTypeOf<{ type: "text"; text: string } | { type: "image"; data: string; mimeType: string }>();
    expectTypeOf<RuntimeScope>().toEqualTypeOf<{ agent_id: string; conversation_id: string }>();
    expectTypeOf<ExternalToolDefinition>().toEqualTypeOf<{
      name: string;
      label?: string | undefined;
      description: string;
      parameters: Record<string, unknown>;
      timeout_ms?: number | undefined;
    }>();
    expectTypeOf<ExternalToolsGroup>().toEqualTypeOf<{ scope_id?: string | undefined; tools: ExternalToolDefinition[] }>();
    expectTypeOf<FrameEnvelope>().toEqualTypeOf<{ seq?: number; event_seq?: number; idempotency_key?: string }>();
    expectTypeOf(decodeFrame).toEqualTypeOf<(text: string, options?: { maxDepth?: number }) => DecodedFrame>();
    expectTypeOf(encodeFrame).toEqualTypeOf<(frame: OutboundFrame, trusted?: boolean) => string>();
  });

  it("makes result and error exclusive in a tool response", () => {
    expectTypeOf<{ result: { content: [] } }>().toExtend<ToolCallResponseBody>();
    expectTypeOf<{ error: string }>().toExtend<ToolCallResponseBody>();
    expectTypeOf<{ type: "external_tool_call_response"; request_id: string; error: string }>().toExtend<ExternalToolCallResponseFrame>();
    // @ts-expect-error a body needs result or error
    const empty: ToolCallResponseBody = {};
    void empty;
  });

  it("narrows inbound frames by type", () => {
    const decoded = decodeFrame("{}");
    if (decoded.kind === "frame" && decoded.frame.type === "external_tool_call_request") {
      expectTypeOf(decoded.frame.tool_name).toEqualTypeOf<string>();
      expectTypeOf(decoded.frame.input).toEqualTypeOf<Record<string, unknown>>();
    }
    expectTypeOf<Extract<InboundFrame, { type: "control_request" }>["request"]["subtype"]>().toEqualTypeOf<"can_use_tool">();
  });

  it("narrows stream deltas after isKnownStreamDelta", () => {
    const delta = {} as StreamDelta;
    if (isKnownStreamDelta(delta) && delta.message_type === "tool_return_message") {
      // Top-level fields are absent in the backend-streamed shape (only tool_returns[]): docs/protocol.md#stream_delta.
      expectTypeOf(delta.status).toEqualTypeOf<"success" | "error" | undefined>();
      expectTypeOf(delta.tool_call_id).toEqualTypeOf<string | undefined>();
      expectTypeOf(delta.tool_returns).toEqualTypeOf<unknown[] | undefined>();
    }
  });

  it("types input payloads", () => {
    expectTypeOf<{
      type: "input";
      runtime: RuntimeScope;
      payload: { kind: "approval_response"; request_id: string; decision: { behavior: "deny"; message: string } };
    }>().toExtend<InputFrame>();
  });
});
