/**
 * The bridge's threads, in one place: found by an explicit key or by the fingerprint of the
 * transcript each produced, always within one principal (an API key never sees another key's
 * threads), bounded in number (`maxThreads`: a new thread replaces the least recently used idle
 * one, or is refused with 429) and in idle lifetime (`threadIdleMs`: one timer, armed for the
 * next thread to expire). A thread that is answering a request, waiting for the client's tool
 * results or stopping a turn is never replaced or expired.
 */
import { unrefTimer, type TimerHandle, type Timers } from "../internal/timers.js";
import { ChatApiError } from "./chat-api-error.js";
import type { ChatThread } from "./chat-thread.js";
import type { TranscriptFingerprints } from "./transcript-fingerprint.js";

export interface ThreadDirectoryOptions {
  maxThreads: number;
  threadIdleMs: number;
  timers: Timers;
}

/** A summary of one thread (for `bridge.threads()`). */
export interface ThreadInfo {
  /** The thread's id: its explicit key, or `thread_<random>` (the `x-toolrelay-thread` response header). */
  id: string;
  /** Whose it is: `key-<n>` (the position of its API key in `apiKeys`) or `anonymous`. */
  principal: string;
  /** The Letta agent behind it. */
  agentId: string;
  /** Its Letta conversation (the `x-letta-conversation` response header). */
  conversationId: string;
  /** A request is being answered. */
  busy: boolean;
  /** Tool calls were returned to the client and the turn waits for their results. */
  waitingForTools: boolean;
}

export class ThreadDirectory {
  #options: ThreadDirectoryOptions;
  /** `principal \0 thread id` → thread. */
  #threads = new Map<string, ChatThread>();
  /** `principal \0 transcript fingerprint` → the thread whose transcript it is. */
  #byTranscript = new Map<string, ChatThread>();
  #transcriptOf = new Map<ChatThread, string>();
  /** `principal \0 thread id` → a thread being opened (a second request for it waits). */
  #opening = new Map<string, Promise<ChatThread>>();
  #timer: TimerHandle | undefined;
  #closed = false;

  constructor(options: ThreadDirectoryOptions) {
    this.#options = options;
  }

  /** The principal's thread of that id (or key). */
  async byId(principal: string, id: string): Promise<ChatThread | undefined> {
    const opening = this.#opening.get(slot(principal, id));
    if (opening !== undefined) await opening.catch(() => undefined);
    return this.#usable(this.#threads.get(slot(principal, id)));
  }

  /**
   * The principal's thread whose transcript is the longest prefix of the request's messages,
   * and the index of that prefix. A request that only repeats a transcript (nothing after it)
   * matches it too: the thread then refuses it with "nothing to answer".
   */
  byTranscript(principal: string, fingerprints: TranscriptFingerprints): ChatThread | undefined {
    for (let index = fingerprints.prefixes.length - 1; index >= 0; index--) {
      const prefix = fingerprints.prefixes[index];
      if (prefix === undefined) continue;
      const thread = this.#usable(this.#byTranscript.get(slot(principal, prefix)));
      if (thread !== undefined) return thread;
    }
    return undefined;
  }

  /**
   * Open a new thread with `open` once there is room: past `maxThreads` the least recently used
   * idle thread is closed; with none idle, a 429. A concurrent {@link byId} for the same id
   * waits for it.
   */
  async add(principal: string, id: string, open: () => Promise<ChatThread>): Promise<ChatThread> {
    if (this.#closed) throw new ChatApiError(503, "server_error", "bridge_closing", "the bridge is shutting down");
    const key = slot(principal, id);
    if (this.#threads.size + this.#opening.size >= this.#options.maxThreads) await this.#evictOne();
    const opening = open();
    this.#opening.set(key, opening);
    try {
      const thread = await opening;
      if (this.#closed) {
        await thread.close();
        throw new ChatApiError(503, "server_error", "bridge_closing", "the bridge is shutting down");
      }
      this.#threads.set(key, thread);
      this.#schedule();
      return thread;
    } finally {
      this.#opening.delete(key);
    }
  }

  /** The thread answered a request: it is found by its new transcript from now on. */
  committed(thread: ChatThread, transcript: string | undefined): void {
    if (transcript !== undefined) {
      const previous = this.#transcriptOf.get(thread);
      if (previous !== undefined && this.#byTranscript.get(slot(thread.principal, previous)) === thread)
        this.#byTranscript.delete(slot(thread.principal, previous));
      this.#byTranscript.set(slot(thread.principal, transcript), thread);
      this.#transcriptOf.set(thread, transcript);
    }
    if (thread.broken) void this.remove(thread);
    this.#schedule();
  }

  /** Forget and close a thread. */
  async remove(thread: ChatThread): Promise<void> {
    const key = slot(thread.principal, thread.id);
    if (this.#threads.get(key) === thread) this.#threads.delete(key);
    const transcript = this.#transcriptOf.get(thread);
    if (transcript !== undefined && this.#byTranscript.get(slot(thread.principal, transcript)) === thread)
      this.#byTranscript.delete(slot(thread.principal, transcript));
    this.#transcriptOf.delete(thread);
    await thread.close();
  }

  list(): ThreadInfo[] {
    return [...this.#threads.values()].map((thread) => ({
      id: thread.id,
      principal: thread.principal,
      agentId: thread.agentId,
      conversationId: thread.conversationId,
      busy: thread.busy,
      waitingForTools: thread.waitingForTools,
    }));
  }

  /** Close every thread; no new one is opened. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) this.#options.timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    await Promise.allSettled([...this.#opening.values()]);
    await Promise.all([...this.#threads.values()].map((thread) => this.remove(thread)));
  }

  #usable(thread: ChatThread | undefined): ChatThread | undefined {
    if (thread === undefined || !thread.broken) return thread;
    void this.remove(thread);
    return undefined;
  }

  async #evictOne(): Promise<void> {
    let oldest: ChatThread | undefined;
    for (const thread of this.#threads.values()) {
      if (idle(thread) && (oldest === undefined || thread.lastUsedAt < oldest.lastUsedAt)) oldest = thread;
    }
    if (oldest === undefined) {
      throw new ChatApiError(
        429,
        "rate_limit_error",
        "too_many_threads",
        `${this.#options.maxThreads} threads are open and none is idle (maxThreads); try again later`,
      );
    }
    await this.remove(oldest);
  }

  /** One timer for the next idle thread to expire. */
  #schedule(): void {
    if (this.#closed) return;
    const { timers, threadIdleMs } = this.#options;
    if (this.#timer !== undefined) timers.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#threads.size === 0) return;
    const now = timers.now();
    let next = Infinity;
    for (const thread of this.#threads.values())
      next = Math.min(next, idle(thread) ? thread.lastUsedAt + threadIdleMs : now + threadIdleMs);
    this.#timer = timers.setTimeout(() => void this.#expire(), Math.max(0, next - now));
    unrefTimer(this.#timer);
  }

  async #expire(): Promise<void> {
    this.#timer = undefined;
    const now = this.#options.timers.now();
    const expired = [...this.#threads.values()].filter((thread) => idle(thread) && now - thread.lastUsedAt >= this.#options.threadIdleMs);
    await Promise.all(expired.map((thread) => this.remove(thread)));
    this.#schedule();
  }
}

function idle(thread: ChatThread): boolean {
  return !thread.busy && !thread.waitingForTools && !thread.stopping;
}

function slot(principal: string, id: string): string {
  return `${principal}\0${id}`;
}
