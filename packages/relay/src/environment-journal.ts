/**
 * What cluster mode adds to one environment (docs/relay-cluster.md), as the environment sees it:
 * whether this node may still act for it (it holds the environment's lease, by its own clock),
 * and the shared records it keeps current — outstanding tool calls, tool registrants, the
 * listener's state. A single relay has none of it. Implemented in `cluster/`.
 */
import type { RelayFrame } from "./relay-frame.js";
import type { RuntimeBinding } from "./runtime-binding.js";

export interface EnvironmentJournal {
  /** Whether this node may act for the environment now; `false` once its lease moved or ran out. */
  mayAct(): boolean;
  /** Makes a tool call durable; resolves once the shared store has it (rejects when it cannot be reached). */
  recordCall(requestId: string, runtimeKey: string, frame: RelayFrame): Promise<void>;
  /** The call was answered to the listener: its record keeps the answer (written again after a move). */
  answerCall(requestId: string, runtimeKey: string, answer: RelayFrame): void;
  /** The call was given up on, or its answer left the window of recent answers. */
  forgetCall(requestId: string): void;
  /** Every call of the environment is void (a fresh listener runtime cannot answer them). */
  forgetAllCalls(): void;
  /** The session identity that registered tools for `runtimeKey` (`undefined`: cleared). */
  setRegistrant(runtimeKey: string, identity: string | undefined): void;
  /** A named SDK session was created here: its identity is bound to `keyId` and `binding`. */
  sessionCreated(identity: string, keyId: string, binding: RuntimeBinding): void;
  /** A named SDK session closed for good. */
  sessionClosed(identity: string): void;
  /** The listener connected (`ready`) or went away. */
  listenerChanged(ready: boolean, connectedAt: number | undefined): void;
}
