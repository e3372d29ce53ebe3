/**
 * The agent's calls to the client's tools in one thread, from the moment the model announces them
 * (a `tool-call` turn event) to the moment the client's result settles them. Each call gets a
 * bridge id (`call_<random>`), the one the client sees and echoes in its `role: "tool"` message:
 * the runtime's own `tool_call_id` is not unique (providers reuse `call_0` in every response).
 *
 * The runtime asks for the calls of one model response one after another, each only once the one
 * before it was answered; the client answers them all in one request. So a result may come before
 * its call was asked for: it is held, and handed over the moment the runtime asks.
 *
 * A call is matched to the runtime's request by `tool_call_id` among the calls still open, so a
 * call must not stay open once the runtime is done with it: a call the runtime answered itself
 * without asking (it refuses one whose required argument is missing) ends when the turn reports
 * its result ({@link ClientCalls.resultReported}). Otherwise the model's next call that reuses
 * the id would be answered with the result held for the refused one and never reach the client.
 */
import { randomBytes } from "node:crypto";
import type { ChatTool } from "./chat-request.js";

/** A call as it is returned to the client in `tool_calls`. */
export interface ReturnedToolCall {
  id: string;
  /** The name as the client declared it. */
  name: string;
  /** The arguments as a JSON text. */
  arguments: string;
}

/**
 * How a call ended, for a result that arrives after it (a late result). `runtime`: the runtime
 * answered it itself and never asked the client (a result for it is dropped, not passed on).
 */
export type ClientCallEnd = "result" | "timeout" | "cancelled" | "runtime";

interface ClientCall {
  id: string;
  runtimeId: string;
  tool: ChatTool;
  input: unknown;
  returned: boolean;
  /** The runtime asked for it (its external request came). */
  asked: boolean;
  /** Set while the runtime waits for the result (the tool's execute is running). */
  waiter: ((text: string) => void) | undefined;
  /** A result that came before the runtime asked for the call. */
  held: string | undefined;
  ended: ClientCallEnd | undefined;
}

/** Ended calls remembered by bridge id (for late results), at most this many. */
const REMEMBERED_ENDS = 256;

export class ClientCalls {
  /** The calls of the running turn, in the order the model made them. */
  #calls: ClientCall[] = [];
  /** Bridge id → tool name and how it ended, of calls of earlier turns (bounded, oldest first). */
  #ended = new Map<string, { name: string; end: ClientCallEnd }>();

  /** The model announced a call (before the runtime asks for it). Ignored if it is already known. */
  announce(runtimeId: string, tool: ChatTool, input: unknown): void {
    if (this.#open(runtimeId) === undefined) this.#calls.push(this.#create(runtimeId, tool, input));
  }

  /**
   * The runtime asks for a call's result. Resolves with the client's result text: at once when it
   * is already held (`waiting: false`), else when {@link deliver} gets it.
   */
  request(runtimeId: string, tool: ChatTool, input: unknown): { result: Promise<string>; waiting: boolean; id: string } {
    let call = this.#open(runtimeId);
    if (call === undefined) {
      call = this.#create(runtimeId, tool, input);
      this.#calls.push(call);
    }
    call.asked = true;
    const held = call.held;
    if (held !== undefined) {
      this.#end(call, "result");
      return { result: Promise.resolve(held), waiting: false, id: call.id };
    }
    const waiting = call;
    return {
      id: call.id,
      waiting: true,
      result: new Promise<string>((resolve) => {
        waiting.waiter = resolve;
      }),
    };
  }

  /**
   * The turn reported the runtime's result for `runtimeId`. A call of that id the runtime never
   * asked for is over: the runtime answered it itself (a result the client sent for it is
   * dropped). Calls it asked for end by the client's result, their timeout or the turn's abort.
   */
  resultReported(runtimeId: string): void {
    for (const call of this.#calls) if (call.runtimeId === runtimeId && !call.asked && call.ended === undefined) this.#end(call, "runtime");
  }

  /** A waiting call ended without a result from the client (its timeout, the turn's abort). */
  abandon(id: string, end: ClientCallEnd): void {
    const call = this.#calls.find((candidate) => candidate.id === id);
    if (call !== undefined && call.ended === undefined) this.#end(call, end);
  }

  /** Calls the runtime waits for that the client has not been given yet. */
  get waitingUnreturned(): number {
    return this.#calls.filter((call) => call.waiter !== undefined && call.ended === undefined && !call.returned).length;
  }

  /** Calls returned to the client whose result has not come yet (its next request must answer them). */
  get outstanding(): readonly string[] {
    return this.#calls.filter((call) => call.returned && call.ended === undefined && call.held === undefined).map((call) => call.id);
  }

  /**
   * The calls to return to the client now: every open call it has not been given, in order. They
   * count as returned from here on.
   */
  takeUnreturned(): ReturnedToolCall[] {
    const taken = this.#calls.filter((call) => !call.returned && call.ended === undefined && call.held === undefined);
    for (const call of taken) call.returned = true;
    return taken.map((call) => ({ id: call.id, name: call.tool.declaredName, arguments: argumentsText(call.input) }));
  }

  /**
   * The client's result for call `id`: handed to the waiting runtime, or held until it asks.
   * Returns `"delivered"`; `"late"` when the call ended before; `"dropped"` when the runtime
   * answered it itself (nobody is told); `"unknown"` for an id never given out.
   */
  deliver(id: string, text: string): "delivered" | "late" | "dropped" | "unknown" {
    if (this.endedByRuntime(id)) return "dropped";
    const call = this.#calls.find((candidate) => candidate.id === id);
    if (call === undefined) return this.#ended.has(id) ? "late" : "unknown";
    if (call.ended !== undefined || call.held !== undefined) return "late";
    if (call.waiter !== undefined) this.#end(call, "result", text);
    else call.held = text;
    return "delivered";
  }

  /** Call `id` (of this or an earlier turn) was answered by the runtime itself, never asked of the client. */
  endedByRuntime(id: string): boolean {
    return (this.#calls.find((call) => call.id === id)?.ended ?? this.#ended.get(id)?.end) === "runtime";
  }

  /** The tool name of a call of this or an earlier turn (for a late result). */
  nameOf(id: string): string | undefined {
    return this.#calls.find((call) => call.id === id)?.tool.name ?? this.#ended.get(id)?.name;
  }

  /** The turn ended: every call is forgotten but its id, name and end. */
  clear(): void {
    for (const call of this.#calls) this.#remember(call.id, call.tool.name, call.ended ?? "cancelled");
    this.#calls = [];
  }

  #open(runtimeId: string): ClientCall | undefined {
    return this.#calls.find((call) => call.runtimeId === runtimeId && call.ended === undefined);
  }

  #create(runtimeId: string, tool: ChatTool, input: unknown): ClientCall {
    return {
      id: `call_${randomBytes(12).toString("base64url")}`,
      runtimeId,
      tool,
      input,
      returned: false,
      asked: false,
      waiter: undefined,
      held: undefined,
      ended: undefined,
    };
  }

  #end(call: ClientCall, end: ClientCallEnd, text?: string): void {
    call.ended = end;
    const waiter = call.waiter;
    call.waiter = undefined;
    call.held = undefined;
    // An abandoned call's execute resolves too (with nothing: the table has answered it already and
    // reports the value as late), so that nothing waits on it forever.
    if (waiter !== undefined) waiter(text ?? "");
  }

  #remember(id: string, name: string, end: ClientCallEnd): void {
    this.#ended.set(id, { name, end });
    if (this.#ended.size > REMEMBERED_ENDS) this.#ended.delete(this.#ended.keys().next().value as string);
  }
}

function argumentsText(input: unknown): string {
  if (typeof input === "string") return input;
  return JSON.stringify(input ?? {});
}
