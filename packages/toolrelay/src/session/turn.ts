import type { ToolrelayError } from "../errors.js";
import type { ClientTool, ToolInputSchema } from "../tools/index.js";
import { AsyncEventQueue } from "./async-event-queue.js";
import { type RuntimeError, runtimeErrorFromText, sameFailure } from "./runtime-error.js";
import type { SessionToolList } from "./session-events.js";
import type { TurnEvent } from "./turn-events.js";

/** A client tool call of the turn that ended `ok`, with the value its `execute` returned (see `ToolCallEndEvent.output`). */
export interface ToolOutput<TOutput = unknown, TName extends string = string> {
  toolCallId: string;
  toolName: TName;
  output: TOutput | undefined;
}

/** The {@link ToolOutput} of a session whose tools are `TTools`: one variant per client tool. */
export type ToolOutputOfTools<TTools extends SessionToolList> = TTools[number] extends infer TTool
  ? TTool extends ClientTool<ToolInputSchema, infer TOutput, infer TName>
    ? ToolOutput<TOutput, TName>
    : ToolOutput
  : never;

/** How a turn ended: its stop reason, text, events, and the typed outputs of its client tool calls. */
export interface TurnResult<TTools extends SessionToolList = SessionToolList> {
  /** The runtime's stop reason (`end_turn`, `cancelled`, `error`, ...). */
  stopReason: string;
  /** All assistant text of the turn, concatenated in order. */
  text: string;
  /**
   * Every event of the turn, in order (the same ones the iterator yields): at most one
   * `tool-result` per tool call, subagent events wrapped as `subagent`.
   */
  events: TurnEvent[];
  /**
   * The runtime's error message when the turn ended in an error: readable text (the same as the
   * turn's `error` event, whose other fields have the runtime's error class, detail and run).
   */
  error?: string | undefined;
  /**
   * The client tool calls of this turn that ended `ok`, in the order they ended, each with the
   * value `execute` returned (typed by the tool's `outputSchema`): what the app reads, not what
   * the model got (that is the `tool-result` event's `text`).
   */
  toolOutputs: ToolOutputOfTools<TTools>[];
}

/**
 * One turn: iterate it for events as they happen, or await `result`. Both can
 * be used together. `result` rejects only when the SDK could not run the turn
 * (link lost, input refused, session closed); an error inside the turn ends it
 * with `stopReason: "error"` and `error` set.
 */
export class Turn<TTools extends SessionToolList = SessionToolList> implements AsyncIterable<TurnEvent> {
  /** Settles when the turn ends. */
  readonly result: Promise<TurnResult<TTools>>;
  #queue = new AsyncEventQueue<TurnEvent>();
  #events: TurnEvent[] = [];
  #text = "";
  /** `<subagent id or "">\0<tool_call_id>` → tool name, of the calls seen in this turn. */
  #toolNames = new Map<string, string>();
  /** The same keys, for calls whose one `tool-result` was already yielded. */
  #resulted = new Set<string>();
  #error: string | undefined;
  /** The failures already yielded as `error` events, per subagent (`""`: the turn's own). */
  #failures = new Map<string, RuntimeError[]>();
  #done = false;
  #resolve!: (result: TurnResult<TTools>) => void;
  #toolOutputs: ToolOutput[] = [];
  #reject!: (error: ToolrelayError) => void;
  #onAbort: (turn: Turn) => Promise<void>;

  /** @internal Created by `Session.send`. */
  static create(onAbort: (turn: Turn) => Promise<void>): Turn {
    return new Turn(onAbort);
  }

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; Session.send is the way in
  private constructor(onAbort: (turn: Turn) => Promise<void>) {
    this.#onAbort = onAbort;
    this.result = new Promise<TurnResult<TTools>>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // A caller who only iterates must not get an unhandled rejection.
    this.result.catch(() => undefined);
  }

  /** `true` once the turn ended (or failed). */
  get done(): boolean {
    return this.#done;
  }

  /** The turn's events as they happen (`for await`); it ends after `stop`, or throws what `result` rejects with. */
  [Symbol.asyncIterator](): AsyncIterator<TurnEvent> {
    return this.#queue[Symbol.asyncIterator]();
  }

  /**
   * Stop the turn: the runtime is told to abort, and this turn's pending client tool calls are
   * answered as cancelled at once. Resolves once the turn ended. Its result has the runtime's
   * stop reason: `cancelled`, or `end_turn` when the runtime did not take the abort and the model
   * finished with the cancelled answers (the real runtime does this now and then).
   */
  abort(): Promise<void> {
    if (this.#done) return Promise.resolve();
    return this.#onAbort(this);
  }

  /**
   * @internal Record and yield one event. A second `tool-result` for the same
   * call is dropped (the runtime may repeat a result); a new `tool-call` with a
   * reused id starts a new call. A second `error` for the same failure (the same
   * message of the same run: the runtime reports one failure up to three ways) is dropped.
   */
  push(event: TurnEvent): void {
    if (this.#done) return;
    const stream = event.type === "subagent" ? event.event : event;
    const subagentId = event.type === "subagent" ? event.subagentId : "";
    if (stream.type === "error" && !this.#firstReport(subagentId, stream)) return;
    if (stream.type === "tool-call") {
      const key = callKey(subagentId, stream.toolCallId);
      this.#toolNames.set(key, stream.toolName);
      this.#resulted.delete(key);
    } else if (stream.type === "tool-result") {
      const key = callKey(subagentId, stream.toolCallId);
      if (this.#resulted.has(key)) return;
      this.#resulted.add(key);
    }
    this.#events.push(event);
    if (event.type === "assistant") this.#text += event.text;
    if (event.type === "error" && this.#error === undefined) this.#error = event.message;
    this.#queue.push(event);
  }

  /** Whether `error` is a failure not reported yet in this turn (by `subagentId`); remembers it. */
  #firstReport(subagentId: string, error: RuntimeError): boolean {
    const seen = this.#failures.get(subagentId);
    if (seen?.some((known) => sameFailure(known, error))) return false;
    if (seen) seen.push(error);
    else this.#failures.set(subagentId, [error]);
    return true;
  }

  /** @internal A client tool call of this turn ended `ok` with `output`. */
  addToolOutput(toolCallId: string, toolName: string, output: unknown): void {
    if (!this.#done) this.#toolOutputs.push({ toolCallId, toolName, output });
  }

  /** @internal The tool name of a call seen in this turn (of the subagent `subagentId`, if given). */
  toolNameOf(toolCallId: string, subagentId = ""): string | undefined {
    return this.#toolNames.get(callKey(subagentId, toolCallId));
  }

  /**
   * @internal End the turn normally. `error`: the runtime's error text of the end (`turn_finished`),
   * a JSON document of an error included, of the run `runId`; it becomes the result's `error`, and
   * an `error` event only when the turn reported no error of that run (of any run, without `runId`).
   */
  finish(stopReason: string, error?: string, runId?: string): void {
    if (this.#done) return;
    if (error !== undefined) {
      const failure = runtimeErrorFromText(error, runId);
      const reported = this.#failures.get("")?.some((known) => runId === undefined || known.runId === undefined || known.runId === runId);
      if (!reported) this.push({ type: "error", ...failure });
      this.#error = failure.message;
    }
    this.push({ type: "stop", stopReason });
    this.#done = true;
    this.#queue.end();
    const toolOutputs = this.#toolOutputs as ToolOutputOfTools<TTools>[];
    const result: TurnResult<TTools> = { stopReason, text: this.#text, events: this.#events, toolOutputs };
    if (this.#error !== undefined) result.error = this.#error;
    this.#resolve(result);
  }

  /** @internal The SDK could not run the turn to its end. */
  fail(error: ToolrelayError): void {
    if (this.#done) return;
    this.#done = true;
    this.#queue.fail(error);
    this.#reject(error);
  }
}

function callKey(subagentId: string, toolCallId: string): string {
  return `${subagentId}\0${toolCallId}`;
}
