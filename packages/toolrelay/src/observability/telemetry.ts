/**
 * OpenTelemetry spans, without a hard dependency: `@opentelemetry/api` is an optional peer. The
 * session asks for it once; when it is installed, spans go to its global tracer (a no-op until the
 * application registers a tracer provider — the OpenTelemetry rule for libraries) or to the
 * `tracer` option. When it is not installed and no tracer is given, nothing is traced and nothing
 * is loaded.
 *
 * The types here are the few members toolrelay calls, so that an OpenTelemetry `Tracer` fits
 * and the public declarations do not need the package.
 */

/** Attribute values: strings, numbers, booleans and string arrays. No payloads, ever. */
export type TelemetryAttributes = Record<string, string | number | boolean | string[] | undefined>;

/** The members of an OpenTelemetry `Span` toolrelay uses. */
export interface TelemetrySpan {
  /** Add attributes (at the end: outcome, duration, counts). */
  setAttributes(attributes: TelemetryAttributes): unknown;
  /** `code`: 1 ok, 2 error (OpenTelemetry's `SpanStatusCode`). */
  setStatus(status: { code: number; message?: string | undefined }): unknown;
  /** End the span, at `endTime` (epoch milliseconds) when given. */
  end(endTime?: number): void;
  /** `false` for a span that records nothing (no-op or sampled out); its attributes are then not built. */
  isRecording?(): boolean;
}

/** How a {@link SessionTracing.leaf} span ends. */
export interface SpanEnding {
  attributes: TelemetryAttributes;
  failure: string | undefined;
  endTime: number;
}

/** The member of an OpenTelemetry `Tracer` toolrelay uses (`trace.getTracer("my-app")` is one). */
export interface TelemetryTracer {
  /** Start a span; `context` is OpenTelemetry's (the parent span's), when `@opentelemetry/api` is installed. */
  startSpan(
    name: string,
    // No `| undefined` here: the SDK passes these to a tracer the app supplies (OpenTelemetry's `SpanOptions`), never an explicit undefined.
    options?: { attributes?: TelemetryAttributes; startTime?: number },
    context?: unknown,
  ): TelemetrySpan;
}

/** What toolrelay takes from `@opentelemetry/api` when it is installed. */
interface OpenTelemetryApi {
  trace: { getTracer(name: string, version?: string): TelemetryTracer; setSpan(context: unknown, span: TelemetrySpan): unknown };
  context: { active(): unknown };
}

const OK = 1;
const ERROR = 2;

let loading: Promise<OpenTelemetryApi | undefined> | undefined;

/** `@opentelemetry/api`, once per process, or `undefined` when it is not installed. */
function loadOpenTelemetry(): Promise<OpenTelemetryApi | undefined> {
  loading ??= (async () => {
    try {
      // The CommonJS build (Jest included: its module system has no dynamic import) requires it;
      // in the ESM build `require` does not exist and the import below loads it.
      return require("@opentelemetry/api") as OpenTelemetryApi;
    } catch {
      try {
        return (await import("@opentelemetry/api")) as unknown as OpenTelemetryApi;
      } catch {
        return undefined;
      }
    }
  })();
  return loading;
}

/** A started span and the context its children start in. */
export interface OpenSpan {
  readonly span: TelemetrySpan;
  readonly context: unknown;
}

/** The session's tracer: spans for turns and tool calls, or nothing at all. */
export class SessionTracing {
  readonly #tracer: TelemetryTracer | undefined;
  readonly #api: OpenTelemetryApi | undefined;

  // biome-ignore lint/style/useConsistentMemberAccessibility: a constructor cannot be #private; create() is the way in
  private constructor(tracer: TelemetryTracer | undefined, api: OpenTelemetryApi | undefined) {
    this.#tracer = tracer;
    this.#api = api;
  }

  /**
   * `option`: a tracer, `false` (no spans), or `undefined` (the global tracer of
   * `@opentelemetry/api` when installed, else no spans).
   */
  static async create(option: TelemetryTracer | false | undefined): Promise<SessionTracing> {
    if (option === false) return new SessionTracing(undefined, undefined);
    const api = await loadOpenTelemetry();
    return new SessionTracing(option ?? api?.trace.getTracer("toolrelay"), api);
  }

  /** Spans are made (a tracer is set; it may still be OpenTelemetry's no-op one). */
  get enabled(): boolean {
    return this.#tracer !== undefined;
  }

  /** Start a span under `parent` (an {@link OpenSpan}) or under the caller's active context. */
  start(name: string, attributes: TelemetryAttributes, parent?: OpenSpan, startTime?: number): OpenSpan | undefined {
    const tracer = this.#tracer;
    if (tracer === undefined) return undefined;
    try {
      const parentContext = parent?.context ?? this.#api?.context.active();
      const options = startTime === undefined ? { attributes } : { attributes, startTime };
      const span = tracer.startSpan(name, options, parentContext);
      const context = this.#api && parentContext !== undefined ? this.#api.trace.setSpan(parentContext, span) : undefined;
      return { span, context };
    } catch {
      return undefined; // A tracer that throws must not break the session.
    }
  }

  /**
   * A span with no children, started at `startTime` and ended at `endTime` now: no child context
   * is made, and `ending` is not called for a span that does not record (OpenTelemetry's no-op
   * tracer, or one sampled out).
   */
  leaf(name: string, attributes: TelemetryAttributes, parent: OpenSpan | undefined, startTime: number, ending: () => SpanEnding): void {
    const tracer = this.#tracer;
    if (tracer === undefined) return;
    let span: TelemetrySpan;
    try {
      span = tracer.startSpan(name, { attributes, startTime }, parent?.context ?? this.#api?.context.active());
      if (span.isRecording?.() === false) return void span.end();
    } catch {
      return; // as in start
    }
    const { attributes: endAttributes, failure, endTime } = ending();
    this.end({ span, context: undefined }, endAttributes, failure, endTime);
  }

  /** End `open` with `attributes` and an ok or error status. */
  end(open: OpenSpan | undefined, attributes: TelemetryAttributes, failure: string | undefined, endTime?: number): void {
    if (open === undefined) return;
    try {
      open.span.setAttributes(attributes);
      open.span.setStatus(failure === undefined ? { code: OK } : { code: ERROR, message: failure });
      open.span.end(endTime);
    } catch {
      // as above
    }
  }
}
