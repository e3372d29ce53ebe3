/**
 * A resumable scanner of one frame: a JSON object as raw bytes. It finds the top-level fields
 * (their names and the byte span of each value) and the offset of the closing brace, without
 * building the document: nested values are skipped (strings with native `indexOf` jumps), so
 * the relay reads only the few small fields it routes on (frame-facts.ts). `step(budget)` does
 * a bounded amount of work, so a 16 MiB frame is scanned in slices between other connections'
 * frames (fair-scheduler.ts). The structure is checked (brackets, strings, commas, depth ≤ 256);
 * scalars are not fully validated — the peer that receives the frame parses it properly.
 */

/** Where one top-level value sits in the frame. */
export interface FieldSpan {
  start: number;
  /** Exclusive. */
  end: number;
  kind: "string" | "container" | "scalar";
}

export type ScanResult = { ok: true; fields: Map<string, FieldSpan>; closeAt: number } | { ok: false; error: string };

/** Depth limit, counting the top-level object as 1 (as safe-json.ts counts). */
export const MAX_FRAME_DEPTH = 256;

type State =
  | "open"
  | "first-key-or-close"
  | "key"
  | "key-string"
  | "colon"
  | "value"
  | "value-string"
  | "container"
  | "scalar"
  | "comma-or-close"
  | "trailing"
  | "done";

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Bytes a native `indexOf` jump may cover per unit of budget. */
const NATIVE_SPEEDUP = 16;

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

function isScalarByte(byte: number): boolean {
  // digits, sign, dot, exponent and the letters of true / false / null
  return (
    (byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || (byte >= 0x61 && byte <= 0x7a) || byte === 0x45
  );
}

export class FrameScanner {
  #data: Buffer;
  #maxDepth: number;
  #state: State = "open";
  #pos = 0;
  #fields = new Map<string, FieldSpan>();
  #key = "";
  #keyStart = 0;
  #valueStart = 0;
  #stack: number[] = [];
  #inNestedString = false;
  #error: string | undefined;
  #closeAt = -1;

  constructor(data: Buffer, maxDepth = MAX_FRAME_DEPTH) {
    this.#data = data;
    this.#maxDepth = maxDepth;
  }

  get done(): boolean {
    return this.#state === "done" || this.#error !== undefined;
  }

  /** The outcome; only meaningful once {@link done}. */
  result(): ScanResult {
    if (this.#error !== undefined) return { ok: false, error: this.#error };
    if (this.#state !== "done") return { ok: false, error: "scan not finished" };
    return { ok: true, fields: this.#fields, closeAt: this.#closeAt };
  }

  /** Scans until done or about `budget` units of work are spent (1 unit ≈ 1 byte looked at). Returns the units spent. */
  step(budget: number): number {
    let spent = 0;
    while (!this.done && spent < budget) spent += this.#advance(budget - spent);
    return spent;
  }

  #fail(error: string): number {
    this.#error = error;
    return 1;
  }

  /** Skips whitespace; returns the next byte (or -1 at the end). */
  #next(): number {
    const data = this.#data;
    while (this.#pos < data.length && isWhitespace(data[this.#pos]!)) this.#pos++;
    return this.#pos < data.length ? data[this.#pos]! : -1;
  }

  /**
   * Moves `#pos` towards the quote that ends the string being read (`#pos` is inside it). Returns
   * true once `#pos` is on that quote; false when the window ended first (call again).
   */
  #seekStringEnd(window: number): boolean | "unterminated" {
    const data = this.#data;
    const limit = Math.min(data.length, this.#pos + window);
    while (this.#pos < limit) {
      const found = data.subarray(this.#pos, limit).indexOf(QUOTE);
      if (found < 0) {
        this.#pos = limit;
        break;
      }
      const quote = this.#pos + found;
      let backslashes = 0;
      while (quote - 1 - backslashes >= 0 && data[quote - 1 - backslashes] === BACKSLASH) backslashes++;
      if (backslashes % 2 === 0) {
        this.#pos = quote;
        return true;
      }
      this.#pos = quote + 1;
    }
    return this.#pos >= data.length ? "unterminated" : false;
  }

  #advance(budget: number): number {
    const data = this.#data;
    switch (this.#state) {
      case "open": {
        if (this.#next() !== 0x7b) return this.#fail("frame is not a JSON object");
        this.#pos++;
        this.#state = "first-key-or-close";
        return 1;
      }
      case "first-key-or-close":
      case "key": {
        const byte = this.#next();
        if (byte === 0x7d && this.#state === "first-key-or-close") return this.#close();
        if (byte !== QUOTE) return this.#fail("expected a field name");
        this.#pos++;
        this.#keyStart = this.#pos;
        this.#state = "key-string";
        return 1;
      }
      case "key-string":
      case "value-string": {
        const start = this.#pos;
        const found = this.#seekStringEnd(budget * NATIVE_SPEEDUP);
        const spent = 1 + Math.floor((this.#pos - start) / NATIVE_SPEEDUP);
        if (found === "unterminated") return this.#fail("unterminated string");
        if (!found) return spent;
        if (this.#state === "key-string") {
          const key = decodeKey(data, this.#keyStart, this.#pos);
          if (key === undefined) return this.#fail("invalid field name");
          this.#key = key;
          this.#pos++;
          this.#state = "colon";
        } else {
          this.#pos++;
          this.#fields.set(this.#key, { start: this.#valueStart, end: this.#pos, kind: "string" });
          this.#state = "comma-or-close";
        }
        return spent;
      }
      case "colon": {
        if (this.#next() !== 0x3a) return this.#fail("expected ':'");
        this.#pos++;
        this.#state = "value";
        return 1;
      }
      case "value": {
        const byte = this.#next();
        this.#valueStart = this.#pos;
        if (byte === QUOTE) {
          this.#pos++;
          this.#state = "value-string";
        } else if (byte === 0x7b || byte === 0x5b) {
          this.#state = "container";
        } else if (byte >= 0 && isScalarByte(byte)) {
          this.#state = "scalar";
        } else return this.#fail("expected a value");
        return 1;
      }
      case "scalar": {
        const start = this.#pos;
        while (this.#pos < data.length && isScalarByte(data[this.#pos]!)) this.#pos++;
        this.#fields.set(this.#key, { start: this.#valueStart, end: this.#pos, kind: "scalar" });
        this.#state = "comma-or-close";
        return 1 + this.#pos - start;
      }
      case "container":
        return this.#container(budget);
      case "comma-or-close": {
        const byte = this.#next();
        if (byte === 0x2c) {
          this.#pos++;
          this.#state = "key";
          return 1;
        }
        if (byte === 0x7d) return this.#close();
        return this.#fail("expected ',' or '}'");
      }
      case "trailing": {
        if (this.#next() !== -1) return this.#fail("data after the closing brace");
        this.#state = "done";
        return 1;
      }
      case "done":
        return 1;
    }
  }

  #close(): number {
    this.#closeAt = this.#pos;
    this.#pos++;
    this.#state = "trailing";
    return 1;
  }

  /** Inside a nested value: brackets counted (and matched), strings jumped over, all within `budget`. */
  #container(budget: number): number {
    const data = this.#data;
    let spent = 0;
    while (spent < budget) {
      if (this.#inNestedString) {
        const start = this.#pos;
        const found = this.#seekStringEnd((budget - spent) * NATIVE_SPEEDUP);
        spent += 1 + Math.floor((this.#pos - start) / NATIVE_SPEEDUP);
        if (found === "unterminated") return spent + this.#fail("unterminated string");
        if (!found) return spent;
        this.#inNestedString = false;
        this.#pos++;
        continue;
      }
      if (this.#pos >= data.length) return spent + this.#fail("unterminated value");
      const byte = data[this.#pos]!;
      spent++;
      this.#pos++;
      if (byte === QUOTE) {
        this.#inNestedString = true;
      } else if (byte === 0x7b || byte === 0x5b) {
        this.#stack.push(byte === 0x7b ? 0x7d : 0x5d);
        if (this.#stack.length + 1 > this.#maxDepth) return spent + this.#fail(`nested deeper than ${this.#maxDepth} levels`);
      } else if (byte === 0x7d || byte === 0x5d) {
        if (this.#stack.pop() !== byte) return spent + this.#fail("mismatched bracket");
        if (this.#stack.length === 0) {
          this.#fields.set(this.#key, { start: this.#valueStart, end: this.#pos, kind: "container" });
          this.#state = "comma-or-close";
          return spent;
        }
      }
    }
    return spent;
  }
}

/** A field name: plain bytes, or a JSON string with escapes. */
function decodeKey(data: Buffer, start: number, end: number): string | undefined {
  if (data.subarray(start, end).indexOf(BACKSLASH) < 0) return data.toString("utf8", start, end);
  try {
    return JSON.parse(data.toString("utf8", start - 1, end + 1)) as string;
  } catch {
    return undefined;
  }
}

/** Scans `data` to the end in one go. */
export function scanFrame(data: Buffer, maxDepth = MAX_FRAME_DEPTH): ScanResult {
  const scanner = new FrameScanner(data, maxDepth);
  scanner.step(Number.MAX_SAFE_INTEGER);
  return scanner.result();
}
