/** What every benchmark suite hands back to `bench/run.ts`. */

export interface GoalCheck {
  /** e.g. "≤ 1.15×". */
  text: string;
  met: boolean;
}

/** One line of the table: a candidate against its baseline, measured in the same run. */
export interface ResultRow {
  /** "1. Round trip", ... */
  section: string;
  /** "latency p50", "throughput (256 in flight)", ... */
  measure: string;
  baselineName: string;
  /** Formatted baseline figure (absolute, for orientation only). */
  baselineValue: string;
  candidateName: string;
  candidateValue: string;
  /** candidate ÷ baseline; NaN when there is none ("pending"). */
  ratio: number;
  goal?: GoalCheck;
  /** A short note in the table's last column. */
  note?: string;
}

export interface SuiteResult {
  name: string;
  rows: ResultRow[];
  /** Method notes for docs/performance.md (how it was measured). */
  notes: string[];
  /** Wall-clock duration of the suite, in seconds. */
  seconds: number;
  /** Anything else worth keeping (raw summaries), written as JSON in a details block. */
  details?: Record<string, unknown>;
}

/** Progress lines go to stderr so stdout stays the table. */
export type Log = (line: string) => void;
