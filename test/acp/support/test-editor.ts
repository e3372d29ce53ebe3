/**
 * An editor for tests, built on the real `@agentclientprotocol/sdk` client
 * side (`client()` app): in-memory buffers (the editor's open files, unsaved
 * edits included) over a folder on disk, `fs/*` handlers, permission answers,
 * and a log of every JSON-RPC message it sent and received, in order.
 *
 * Connect it to an agent process (`connectEditorToProcess`, over stdio) or to
 * an in-process agent (`memoryStreamPair`).
 */
import { readFile } from "node:fs/promises";
import {
  client as acpClient,
  RequestError,
  type AnyMessage,
  type ClientConnection,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type Stream,
} from "@agentclientprotocol/sdk";

/** One JSON-RPC message as the editor saw it. */
export interface EditorLogEntry {
  /** `in`: agent → editor; `out`: editor → agent. */
  direction: "in" | "out";
  message: AnyMessage;
}

export interface EditorReadRecord {
  path: string;
  requestId: unknown;
  sessionId: string;
  /** How the request ended for the editor. */
  outcome: "answered" | "refused" | "cancelled" | "pending";
}

export interface TestEditorOptions {
  /** Advertised `clientCapabilities.fs`. Default both `true`. */
  fs?: { readTextFile?: boolean; writeTextFile?: boolean };
  /** Paths whose reads never answer until the agent cancels them (`$/cancel_request`). */
  slowPaths?: Iterable<string>;
  /**
   * Answers permission requests. Default: the first `allow_once` option. `signal` fires when the
   * agent cancels the request (`$/cancel_request`); an editor then answers `cancelled`.
   */
  permission?: (request: RequestPermissionRequest, signal: AbortSignal) => RequestPermissionResponse | Promise<RequestPermissionResponse>;
}

export class TestEditor {
  /** Open buffers: path → text (what the user sees, saved or not). */
  readonly buffers = new Map<string, string>();
  readonly log: EditorLogEntry[] = [];
  readonly updates: SessionNotification[] = [];
  readonly reads: EditorReadRecord[] = [];
  readonly writes: Array<{ path: string; content: string; sessionId: string }> = [];
  readonly permissionRequests: RequestPermissionRequest[] = [];
  /** The JSON-RPC ids of permission requests the agent cancelled (`$/cancel_request`) before they were answered. */
  readonly cancelledPermissions: unknown[] = [];
  readonly slowPaths: Set<string>;
  #options: TestEditorOptions;
  #slowWaiters: Array<(record: EditorReadRecord) => void> = [];

  constructor(options: TestEditorOptions = {}) {
    this.#options = options;
    this.slowPaths = new Set(options.slowPaths ?? []);
  }

  get capabilities() {
    return { fs: { readTextFile: this.#options.fs?.readTextFile ?? true, writeTextFile: this.#options.fs?.writeTextFile ?? true } };
  }

  /** The client app with every handler. */
  app() {
    return acpClient({ name: "test-editor" })
      .onRequest("fs/read_text_file", async ({ params, requestId, signal }) => {
        const record: EditorReadRecord = { path: params.path, requestId, sessionId: params.sessionId, outcome: "pending" };
        this.reads.push(record);
        if (this.slowPaths.has(params.path)) {
          for (const waiter of this.#slowWaiters.splice(0)) waiter(record);
          await new Promise<void>((resolve, reject) => {
            const deadline = setTimeout(() => reject(new Error("test editor: a slow read was never cancelled (20 s)")), 20_000);
            signal.addEventListener("abort", () => {
              clearTimeout(deadline);
              resolve();
            });
          });
          record.outcome = "cancelled";
          throw signal.reason;
        }
        let text = this.buffers.get(params.path);
        if (text === undefined) {
          try {
            text = await readFile(params.path, "utf8");
          } catch {
            record.outcome = "refused";
            throw RequestError.resourceNotFound(params.path);
          }
        }
        record.outcome = "answered";
        if (params.line != null || params.limit != null) {
          const lines = text.split(/(?<=\n)/);
          const start = (params.line ?? 1) - 1;
          text = lines.slice(start, params.limit != null ? start + params.limit : undefined).join("");
        }
        return { content: text };
      })
      .onRequest("fs/write_text_file", ({ params }) => {
        this.writes.push({ path: params.path, content: params.content, sessionId: params.sessionId });
        this.buffers.set(params.path, params.content);
        return {};
      })
      .onRequest("session/request_permission", async ({ params, requestId, signal }) => {
        this.permissionRequests.push(params);
        signal.addEventListener("abort", () => this.cancelledPermissions.push(requestId), { once: true });
        if (this.#options.permission) return this.#options.permission(params, signal);
        const allow = params.options.find((option) => option.kind === "allow_once")!;
        return { outcome: { outcome: "selected", optionId: allow.optionId } };
      })
      .onNotification("session/update", ({ params }) => {
        this.updates.push(params);
      });
  }

  /** Resolves with the next read of a slow path (or one already waiting). */
  nextSlowRead(timeoutMs = 20_000): Promise<EditorReadRecord> {
    const waiting = this.reads.find((read) => read.outcome === "pending" && this.slowPaths.has(read.path));
    if (waiting) return Promise.resolve(waiting);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("test editor: no slow read arrived")), timeoutMs);
      this.#slowWaiters.push((record) => {
        clearTimeout(timer);
        resolve(record);
      });
    });
  }

  #output: WritableStream<AnyMessage> | undefined;

  /** Connect to an agent over `stream`, logging every message. */
  connect(stream: Stream): ClientConnection {
    const tapped = tapStream(stream, this.log);
    this.#output = tapped.writable;
    return this.app().connect(tapped);
  }

  /** End the editor's output (the agent sees end of input, like a closed stdin). */
  async closeOutput(): Promise<void> {
    await this.#output?.close();
  }

  /** The log from `from` on, as plain JSON (for fixtures). */
  logSince(from: number): EditorLogEntry[] {
    return this.log.slice(from).map((entry) => ({ direction: entry.direction, message: structuredClone(entry.message) }));
  }
}

/** Wraps a stream so that every message in both directions is appended to `log`. */
export function tapStream(stream: Stream, log: EditorLogEntry[]): Stream {
  const incoming = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      log.push({ direction: "in", message: structuredClone(message) });
      controller.enqueue(message);
    },
  });
  const outgoing = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      log.push({ direction: "out", message: structuredClone(message) });
      controller.enqueue(message);
    },
  });
  void stream.readable.pipeTo(incoming.writable).catch(() => undefined);
  void outgoing.readable.pipeTo(stream.writable).catch(() => undefined);
  return { readable: incoming.readable, writable: outgoing.writable };
}

/** Two connected in-memory streams: `[agentSide, editorSide]`. */
export function memoryStreamPair(): [Stream, Stream] {
  const toEditor = new TransformStream<AnyMessage, AnyMessage>();
  const toAgent = new TransformStream<AnyMessage, AnyMessage>();
  return [
    { readable: toAgent.readable, writable: toEditor.writable },
    { readable: toEditor.readable, writable: toAgent.writable },
  ];
}

/** A permission answer that never comes: the editor's dialog stays open until the agent cancels it, then answers `cancelled`. */
export function neverAnswer(_request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse> {
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error("test editor: a permission request was never cancelled (30 s)")), 30_000);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(deadline);
        resolve({ outcome: { outcome: "cancelled" } });
      },
      { once: true },
    );
  });
}

/** The `optionId` of the first option of `kind` (e.g. `"reject_once"`). */
export function choose(request: RequestPermissionRequest, kind: string): RequestPermissionResponse {
  const option = request.options.find((candidate) => candidate.kind === kind);
  if (option === undefined) throw new Error(`test editor: no ${kind} option in ${JSON.stringify(request.options)}`);
  return { outcome: { outcome: "selected", optionId: option.optionId } };
}
