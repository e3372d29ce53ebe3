/**
 * A table of attack attempts and what became of each: every attempt is run, its outcome
 * recorded as refused or SUCCEEDED with the evidence, and the table printed — so a security
 * suite counts its attempts (and asserts that none succeeded) instead of stopping at the first.
 */
import { WebSocket } from "ws";

export interface AttemptRow {
  category: string;
  attempt: string;
  outcome: "refused" | "SUCCEEDED";
  evidence: string;
}

export interface AttemptVerdict {
  refused: boolean;
  evidence: string;
}

export class AttemptTable {
  readonly rows: AttemptRow[] = [];

  /** Runs one attempt; an attempt that throws counts as refused only if `run` says so — a throw is recorded as SUCCEEDED (unexplained). */
  async attempt(category: string, attempt: string, run: () => Promise<AttemptVerdict>): Promise<void> {
    let verdict: AttemptVerdict;
    try {
      verdict = await run();
    } catch (error) {
      verdict = { refused: false, evidence: `the check itself failed: ${error instanceof Error ? error.message : String(error)}` };
    }
    this.rows.push({ category, attempt, outcome: verdict.refused ? "refused" : "SUCCEEDED", evidence: verdict.evidence });
  }

  succeeded(): AttemptRow[] {
    return this.rows.filter((row) => row.outcome === "SUCCEEDED");
  }

  /** The table as Markdown, with a count line per category and a total. */
  markdown(title: string): string {
    const lines = [`${title}`, "", "| # | category | attempt | outcome | evidence |", "| --- | --- | --- | --- | --- |"];
    for (const [index, row] of this.rows.entries())
      lines.push(`| ${index + 1} | ${row.category} | ${row.attempt} | ${row.outcome} | ${row.evidence.replace(/\|/g, "\\|")} |`);
    const categories = [...new Set(this.rows.map((row) => row.category))];
    lines.push("");
    for (const category of categories) {
      const rows = this.rows.filter((row) => row.category === category);
      lines.push(`${category}: ${rows.length} attempts, ${rows.filter((row) => row.outcome === "SUCCEEDED").length} succeeded`);
    }
    lines.push(`total: ${this.rows.length} attempts, ${this.succeeded().length} succeeded`);
    return lines.join("\n");
  }
}

/** What an upgrade attempt ended as: refused over HTTP (status), or accepted and then closed (code), or still open. */
export type UpgradeOutcome =
  | { kind: "refused"; status: number }
  | { kind: "closed"; code: number; reason: string }
  | { kind: "open"; socket: WebSocket };

/** Opens a socket (with `apiKey` as Bearer, or no header when it is empty) and reports how the relay treated it within `settleMs` after it opened (default 200 ms). */
export function tryUpgrade(url: string, apiKey: string, settleMs = 200): Promise<UpgradeOutcome> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
    let settled = false;
    const finish = (outcome: UpgradeOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: "open", socket }), 5_000);
    socket.on("unexpected-response", (request, response) => {
      finish({ kind: "refused", status: response.statusCode ?? 0 });
      request.destroy();
    });
    socket.on("error", () => {});
    socket.on("open", () => {
      clearTimeout(timer);
      setTimeout(() => finish({ kind: "open", socket }), settleMs);
    });
    socket.on("close", (code, reason) => finish({ kind: "closed", code, reason: reason.toString() }));
  });
}

export function describeUpgrade(outcome: UpgradeOutcome): string {
  if (outcome.kind === "refused") return `HTTP ${outcome.status}`;
  if (outcome.kind === "closed") return `accepted, then closed ${outcome.code} "${outcome.reason}"`;
  return "accepted and left open";
}
