/**
 * Where the session's log lines go. A {@link Logger} is anything with pino's shape — `debug`,
 * `info`, `warn`, `error`, each taking `(fields, message)` — so a pino, bunyan or
 * `console`-backed logger can be passed as is. Without one, lines go to the `debug` package under
 * `toolrelay:<component>` and are printed when `DEBUG=toolrelay*` is set.
 *
 * What a line may hold: ids, tool names, outcomes, states, durations, counts — never a prompt, a
 * tool input or a tool result (unless the caller sets `logPayloads`), never a credential (every
 * secret the session knows is replaced by `[redacted]`, payloads and error texts included).
 */
import createDebug from "debug";
import { redact } from "../transport/open-web-socket.js";

/** The fields of one log line: flat, JSON-friendly values. */
export type LogFields = Record<string, string | number | boolean | null | undefined | readonly string[]>;

/** pino's shape: `logger.info({ toolName, durationMs }, "tool call end")`. */
export interface Logger {
  /** Requests, link states, progress, payloads (with `logPayloads`). */
  debug(fields: LogFields, message: string): void;
  /** The life of the session, its turns and its tool calls. */
  info(fields: LogFields, message: string): void;
  /** Something went wrong: a failed turn, a call that did not end `ok`, a refused request, a session error. */
  warn(fields: LogFields, message: string): void;
  /** Not used by toolrelay today; part of the shape so that any pino-like logger fits. */
  error(fields: LogFields, message: string): void;
}

export type LogLevel = keyof Logger;

/** The parts of the session that log: one `debug` namespace each (`toolrelay:turn`, ...). */
export type LogComponent = "session" | "turn" | "tool" | "link";

const namespaces: Record<LogComponent, createDebug.Debugger> = {
  session: createDebug("toolrelay:session"),
  turn: createDebug("toolrelay:turn"),
  tool: createDebug("toolrelay:tool"),
  link: createDebug("toolrelay:link"),
};

/** One line through the `debug` package: `turn end stopReason=end_turn durationMs=12`. */
function writeDebug(level: LogLevel, component: LogComponent, message: string, fields: LogFields): void {
  const namespace = namespaces[component];
  if (!namespace.enabled) return;
  const pairs = Object.entries(fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === "string" && /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value)}`);
  namespace("%s", [level === "debug" || level === "info" ? "" : `${level.toUpperCase()}:`, message, ...pairs].filter(Boolean).join(" "));
}

/**
 * The session's log: to `logger` when given (each line with `component: "toolrelay:<component>"`),
 * else to the `debug` package. Every string of a line goes through {@link redact} with `secrets`.
 * A logger that throws is ignored: logging never breaks a session.
 */
export class SessionLog {
  readonly #logger: Logger | undefined;
  readonly #secrets: readonly string[];

  constructor(logger: Logger | undefined, secrets: readonly string[]) {
    this.#logger = logger;
    this.#secrets = secrets;
  }

  /** Whether a line of `component` would go anywhere (skip building costly fields when not). */
  enabled(component: LogComponent): boolean {
    return this.#logger !== undefined || namespaces[component].enabled;
  }

  write(level: LogLevel, component: LogComponent, message: string, fields: LogFields = {}): void {
    if (!this.enabled(component)) return;
    const clean = this.#clean(fields);
    if (this.#logger === undefined) {
      writeDebug(level, component, message, clean);
      return;
    }
    try {
      this.#logger[level]({ component: `toolrelay:${component}`, ...clean }, message);
    } catch {
      // A logger that throws must not break the session.
    }
  }

  /** Every string (and string array) of `fields` with the known secrets redacted. */
  #clean(fields: LogFields): LogFields {
    const result: LogFields = {};
    for (const [key, value] of Object.entries(fields)) {
      if (typeof value === "string") result[key] = redact(value, this.#secrets);
      else if (Array.isArray(value)) result[key] = value.map((item) => redact(String(item), this.#secrets));
      else result[key] = value as LogFields[string];
    }
    return result;
  }
}
