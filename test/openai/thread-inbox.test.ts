/**
 * The thread inbox on its own, fed by a real {@link Turn}: a reader whose client went away stops
 * at once and takes nothing (what it leaves is there for the next reader).
 */
import { describe, expect, it } from "vitest";
import { ThreadInbox } from "../../src/openai/thread-inbox.js";
import { Turn } from "../../src/session/turn.js";

describe("ThreadInbox", () => {
  it("a reader whose signal aborts stops waiting and takes nothing: the next item goes to the next reader", async () => {
    const turn = Turn.create(async () => undefined);
    const inbox = ThreadInbox.of(turn);
    const gone = new AbortController();
    const waiting = inbox.next(gone.signal);
    gone.abort();
    await expect(waiting).resolves.toBeUndefined();
    turn.push({ type: "assistant", text: "for the next reader", messageId: undefined });
    await expect(inbox.next(new AbortController().signal)).resolves.toMatchObject({
      kind: "event",
      event: { type: "assistant", text: "for the next reader" },
    });
    await expect(inbox.next(gone.signal)).resolves.toBeUndefined();
  });
});
