/**
 * The scripted runtime's `pendingExternalToolCalls` (docs/protocol.md#call-flow to docs/protocol.md#disconnects): one
 * entry per `external_tool_call_request`, keyed by `[connectionId, request_id]`,
 * settled exactly once by the response, the timeout, the connection closing or
 * the runtime stopping. No frame is ever sent to the client on timeout, and a
 * late or unknown response is ignored.
 */
import { randomUUID } from "node:crypto";
import { type Timers, unrefTimer } from "../internal/timers.js";
import { externalFailure, resultFromContent } from "./scripted-tool-result.js";
import type {
  ScriptedCallRecord,
  ScriptedCallStatus,
  ScriptedContentBlock,
  ScriptedRuntimeScope,
  ScriptedToolResult,
} from "./scripted-runtime-types.js";

interface PendingEntry {
  record: ScriptedCallRecord;
  settle(status: ScriptedCallStatus, result: ScriptedToolResult): void;
  /** Settles with the call. */
  settled: Promise<ScriptedToolResult>;
}

/** What the runtime knows when it sends a request. */
export interface ExternalCallRequest {
  connectionId: string;
  runtime: ScriptedRuntimeScope;
  scopeId?: string | undefined;
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
}

const entryKey = (connectionId: string, requestId: string): string => JSON.stringify([connectionId, requestId]);

export class ScriptedCallTable {
  /** Every request ever sent, in order (the public `runtime.calls`). */
  readonly records: ScriptedCallRecord[] = [];
  readonly #pending = new Map<string, PendingEntry>();
  /** Every request frame written, by request id (a re-delivery writes the very same frame again). */
  readonly #framesByRequestId = new Map<string, Record<string, unknown>>();

  readonly #timeoutMs: number;
  readonly #timers: Timers;

  constructor(timeoutMs: number, timers: Timers) {
    this.#timeoutMs = timeoutMs;
    this.#timers = timers;
  }

  get size(): number {
    return this.#pending.size;
  }

  /**
   * Register a request under a fresh `external-tool-<uuid>` id, then write it
   * with `send` (which returns false, or throws, when the socket cannot take it).
   */
  start(request: ExternalCallRequest, send: (frame: Record<string, unknown>) => boolean): Promise<ScriptedToolResult> {
    const requestId = `external-tool-${randomUUID()}`;
    const record: ScriptedCallRecord = { requestId, ...request, status: "pending" };
    this.records.push(record);
    const key = entryKey(request.connectionId, requestId);
    let settled!: Promise<ScriptedToolResult>;
    settled = new Promise<ScriptedToolResult>((resolve) => {
      const timer = this.#timers.setTimeout(() => {
        entry.settle("timed-out", externalFailure(`External tool call timed out: ${request.toolName}`));
      }, this.#timeoutMs);
      unrefTimer(timer);
      const entry: PendingEntry = {
        record,
        get settled() {
          return settled;
        },
        settle: (status, result) => {
          if (this.#pending.get(key) !== entry) return;
          this.#timers.clearTimeout(timer);
          this.#pending.delete(key);
          record.status = status;
          record.result = result;
          resolve(result);
        },
      };
      this.#pending.set(key, entry);
      const frame: Record<string, unknown> = {
        type: "external_tool_call_request",
        request_id: requestId,
        runtime: { agent_id: request.runtime.agent_id, conversation_id: request.runtime.conversation_id },
        ...(request.scopeId !== undefined ? { scope_id: request.scopeId } : {}),
        tool_call_id: request.toolCallId,
        tool_name: request.toolName,
        input: request.input,
      };
      this.#framesByRequestId.set(requestId, frame);
      let sent = false;
      let failure = "External tool controller is not connected";
      try {
        sent = send(frame);
      } catch (error) {
        failure = error instanceof Error ? error.message : String(error);
      }
      if (!sent) entry.settle("send-failed", externalFailure(failure));
    });
    return settled;
  }

  /**
   * Write the request `requestId` again, the very same frame (its `request_id` too), as a relay
   * re-offers an outstanding request: the result is that of the first write (the pending call's, or
   * the one it already settled with). Resolves `undefined` for a request id never written.
   */
  redeliver(requestId: string, send: (frame: Record<string, unknown>) => boolean): Promise<ScriptedToolResult> | undefined {
    const frame = this.#framesByRequestId.get(requestId);
    const record = this.records.find((candidate) => candidate.requestId === requestId);
    if (!frame || !record) return undefined;
    try {
      send(frame);
    } catch {
      // A socket that cannot take it: the first write's outcome stands.
    }
    const pending = this.#pending.get(entryKey(record.connectionId, requestId));
    return pending ? pending.settled : Promise.resolve(record.result!);
  }

  /** Settle the call `[connectionId, request_id]` from a (valid) response frame. False when nothing was pending. */
  answer(connectionId: string, frame: Record<string, unknown>): boolean {
    const entry = this.#pending.get(entryKey(connectionId, frame.request_id as string));
    if (!entry) return false;
    entry.record.response = frame;
    if (typeof frame.error === "string") {
      entry.settle("answered", externalFailure(frame.error));
      return true;
    }
    const result = frame.result as { content: ScriptedContentBlock[]; is_error?: boolean | undefined };
    entry.settle("answered", resultFromContent(result.content, result.is_error === true));
    return true;
  }

  /** docs/protocol.md#disconnects: reject every call owned by a closed connection. */
  rejectConnection(connectionId: string, reason = "Listener connection closed"): void {
    for (const entry of [...this.#pending.values()]) {
      if (entry.record.connectionId === connectionId) entry.settle("connection-closed", externalFailure(reason));
    }
  }

  /** The runtime stops: reject everything. */
  rejectAll(reason = "Listener runtime stopped"): void {
    for (const entry of [...this.#pending.values()]) entry.settle("connection-closed", externalFailure(reason));
  }
}
