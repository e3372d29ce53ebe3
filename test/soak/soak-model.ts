/**
 * The model of the soak: one scripted model server serves every conversation. A request belongs to
 * the conversation and turn named in its last user message (`[soak c<n> t<n>]`); it gets the next
 * reply of that turn's plan (the final text-only reply again past the end, if the runtime asks
 * more often than planned). Every reply it serves is recorded, so the oracle compares a turn with
 * what the model really said, not with what the plan hoped for.
 */
import type { ModelRequest, ScriptedReply } from "../support/scripted-model-server.js";
import type { CallPlan, ConversationPlan } from "./soak-plan.js";

export const SOAK_TOOL = "soak_step";

export interface ServedReply {
  /** When the reply was fully served (ms, Date.now). */
  at: number;
  text: string;
  calls: CallPlan[];
}

/** The user message of turn `turn` of conversation `conversation`. */
export function soakMessage(conversation: number, turn: number): string {
  return `[soak c${conversation} t${turn}] Please go on.`;
}

const TAG = /\[soak c(\d+) t(\d+)\]/;

export class SoakModel {
  readonly #plans = new Map<number, ConversationPlan>();
  /** `c/t` → replies served, in order. */
  readonly #served = new Map<string, ServedReply[]>();
  /** Requests that named no soak turn (should stay 0). */
  strayRequests = 0;

  add(conversation: number, plan: ConversationPlan): void {
    this.#plans.set(conversation, plan);
  }

  served(conversation: number, turn: number): readonly ServedReply[] {
    return this.#served.get(`${conversation}/${turn}`) ?? [];
  }

  /** A `ModelScript` for the scripted model server. */
  readonly script = async (request: ModelRequest): Promise<ScriptedReply> => {
    const match = TAG.exec(request.lastUserText);
    const plan = match ? this.#plans.get(Number(match[1])) : undefined;
    const turnPlan = plan?.turns[Number(match?.[2])];
    if (!match || !turnPlan) {
      this.strayRequests++;
      return { text: "stray" };
    }
    const key = `${match[1]}/${match[2]}`;
    const served = this.#served.get(key) ?? [];
    this.#served.set(key, served);
    const reply = turnPlan.replies[Math.min(served.length, turnPlan.replies.length - 1)]!;
    // Reserve the slot now: the runtime may ask again while this reply is still being "thought".
    const record: ServedReply = { at: Number.POSITIVE_INFINITY, text: reply.text, calls: reply.calls };
    served.push(record);
    await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    record.at = Date.now();
    if (reply.calls.length === 0) return { text: reply.text };
    return {
      ...(reply.text === "" ? {} : { text: reply.text }),
      toolCalls: reply.calls.map((call) => ({ id: call.id, name: SOAK_TOOL, arguments: call.args })),
    };
  };
}
