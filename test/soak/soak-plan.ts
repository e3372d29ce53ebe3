/**
 * What one soak conversation will do, drawn from a seed: its turns, the pause before each, and
 * for each turn the model's replies (its delay, narration, tool calls — several in one reply, some
 * reusing `call_0` with the same or other arguments) and whether the turn is aborted mid-call or
 * the session closed mid-burst. The same seed gives the same plan on any machine.
 */
import { Prng } from "../reliability/support/prng.js";

/** What the tool does when called. */
export type CallBehavior = "ok" | "throw" | "error-result" | "timeout" | "ignore-signal";

export interface CallPlan {
  /** `call_0` (a provider that numbers every call so) or a unique id. */
  id: string;
  behavior: CallBehavior;
  /** The tool's arguments; a reused `call_0` may repeat an earlier call's arguments exactly. */
  args: { label: string; behavior: CallBehavior };
}

export interface ReplyPlan {
  /** How long the model takes for this reply, in ms. */
  delayMs: number;
  text: string;
  calls: CallPlan[];
}

export interface TurnPlan {
  /** Pause after the previous turn ended (0 included: the runtime's lying loop status). */
  pauseMs: number;
  /** Replies until the final text-only one (the last reply has no calls). */
  replies: ReplyPlan[];
  /** Abort the turn once this many of its tool calls started (the abort lands mid-call). */
  abortAtCall: number | undefined;
  /** Close the session once this many of its tool calls started (mid-burst): the conversation's last turn. */
  closeAtCall: number | undefined;
}

export interface ConversationPlan {
  seed: number;
  turns: TurnPlan[];
}

export interface PlanLimits {
  /** The model's delay per reply is drawn from 0 to this, in ms. Default 3_000. */
  maxModelDelayMs: number;
  /** Pauses between turns are drawn from 0 to this, in ms (a third of them 0). Default 1_500. */
  maxPauseMs: number;
  /** Turns per conversation, at most. Default 6. */
  maxTurns: number;
}

export const DEFAULT_PLAN_LIMITS: PlanLimits = { maxModelDelayMs: 3_000, maxPauseMs: 1_500, maxTurns: 6 };

const BEHAVIORS: readonly CallBehavior[] = ["ok", "ok", "ok", "ok", "throw", "error-result", "timeout", "ignore-signal"];

export function planConversation(seed: number, limits: PlanLimits = DEFAULT_PLAN_LIMITS): ConversationPlan {
  const random = new Prng(seed);
  const turns: TurnPlan[] = [];
  const earlierArgs: Array<CallPlan["args"]> = [];
  const turnCount = random.int(1, limits.maxTurns);
  let unique = 0;
  for (let turn = 0; turn < turnCount; turn++) {
    const replies: ReplyPlan[] = [];
    const toolReplies = random.int(0, 2);
    let callCount = 0;
    for (let reply = 0; reply < toolReplies; reply++) {
      const calls: CallPlan[] = [];
      const count = random.int(1, 3);
      for (let index = 0; index < count; index++) {
        const reuse = index === 0 && random.chance(0.35);
        const repeat = reuse && earlierArgs.length > 0 && random.chance(0.5);
        const behavior = random.pick(BEHAVIORS);
        const args = repeat ? random.pick(earlierArgs) : { label: `t${turn}r${reply}c${index}`, behavior };
        earlierArgs.push(args);
        calls.push({ id: reuse ? "call_0" : `call_${seed}_${++unique}`, behavior: args.behavior, args });
      }
      callCount += calls.length;
      replies.push({ delayMs: delay(random, limits), text: random.chance(0.6) ? `Narration ${turn}.${reply}. ` : "", calls });
    }
    replies.push({ delayMs: delay(random, limits), text: `Final answer of turn ${turn}.`, calls: [] });
    const last = turn === turnCount - 1;
    const abortAtCall = callCount > 0 && !last && random.chance(0.15) ? random.int(1, callCount) : undefined;
    const closeAtCall =
      callCount > 1 && last && abortAtCall === undefined && random.chance(0.25) ? random.int(1, callCount - 1) : undefined;
    const pauseMs = random.chance(0.34) ? 0 : random.int(0, limits.maxPauseMs);
    turns.push({ pauseMs, replies, abortAtCall, closeAtCall });
  }
  return { seed, turns };
}

function delay(random: Prng, limits: PlanLimits): number {
  return random.chance(0.2) ? random.int(0, 50) : random.int(0, limits.maxModelDelayMs);
}
