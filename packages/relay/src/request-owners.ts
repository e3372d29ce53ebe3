/**
 * Which SDK session sent each request the listener has not answered yet, so its response
 * (`runtime_start_response`, `input_accepted`, `sync_response`, …) goes to that session only.
 * A `request_id` belongs to one session at a time: another session reusing it is refused, so no
 * session can divert another's answers. Each session keeps at most
 * {@link MAX_PENDING_REQUESTS_PER_SESSION} entries (its oldest are forgotten first).
 */
import type { SdkSession } from "./sdk-session.js";

/** Requests remembered per session for routing their answers. */
export const MAX_PENDING_REQUESTS_PER_SESSION = 1_000;

export interface PendingRequest {
  session: SdkSession;
  /** The command's type (`runtime_start` binds and registers tools when answered). */
  type: string;
  /** A `runtime_start` with at least one non-empty tool group. */
  registersTools: boolean;
  /** A `runtime_start` that creates its agent or conversation: the answer names the runtime to bind and register. */
  registersOnAnswer: boolean;
}

export class RequestOwners {
  #byId = new Map<string, PendingRequest>();
  #bySession = new Map<SdkSession, Set<string>>();

  /** Records `requestId` for `entry.session`; false when another live session's request uses it. */
  claim(requestId: string, entry: PendingRequest): boolean {
    const current = this.#byId.get(requestId);
    if (current && current.session !== entry.session && !current.session.isClosed) return false;
    if (current) this.#unlink(requestId, current.session);
    this.#byId.set(requestId, entry);
    let ids = this.#bySession.get(entry.session);
    if (!ids) {
      ids = new Set();
      this.#bySession.set(entry.session, ids);
    }
    ids.add(requestId);
    if (ids.size > MAX_PENDING_REQUESTS_PER_SESSION) {
      const oldest = ids.values().next().value as string;
      ids.delete(oldest);
      this.#byId.delete(oldest);
    }
    return true;
  }

  /** The request `requestId` answers (removed: a request has one answer). */
  take(requestId: string): PendingRequest | undefined {
    const entry = this.#byId.get(requestId);
    if (!entry) return undefined;
    this.#byId.delete(requestId);
    this.#unlink(requestId, entry.session);
    return entry;
  }

  /** Forgets every request of a closed session. */
  forgetSession(session: SdkSession): void {
    for (const requestId of this.#bySession.get(session) ?? []) this.#byId.delete(requestId);
    this.#bySession.delete(session);
  }

  clear(): void {
    this.#byId.clear();
    this.#bySession.clear();
  }

  #unlink(requestId: string, session: SdkSession): void {
    const ids = this.#bySession.get(session);
    if (!ids) return;
    ids.delete(requestId);
    if (ids.size === 0) this.#bySession.delete(session);
  }
}
