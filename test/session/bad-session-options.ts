/**
 * Bad `createSession` options, one a row: each must be refused with INVALID_OPTIONS naming the
 * option, before anything opens. `url` is a live scripted runtime, so an option that slipped
 * through would really connect (and could fail later, or leak a rejection).
 */
export type BadOptionCase = [name: string, options: unknown, path: RegExp];

export function badSessionOptions(url: string): BadOptionCase[] {
  const local = { kind: "local", url, pingIntervalMs: 0 };
  const base = { backend: local, agent: { create: { model: "scripted/test" } } };
  const cloud = { kind: "cloud", apiKey: "key", baseUrl: "http://127.0.0.1:9", environment: { name: "box" } };
  return [
    ["no options at all", undefined, /options: createSession needs an options object/],
    ["no backend", { agent: base.agent }, /options\.backend: is required/],
    ["an unknown backend kind", { ...base, backend: { kind: "remote" } }, /options\.backend\.kind: must be "local" or "cloud"/],
    [
      "the link backend (test-only: createSessionOnLink)",
      { ...base, backend: { kind: "link", link: { connect() {}, send() {}, close() {}, on() {} } } },
      /options\.backend\.kind: must be "local" or "cloud"/,
    ],
    ["an unknown backend option", { ...base, backend: { ...local, pingInterval: 5 } }, /options\.backend\.pingInterval: is not an option/],
    ["no agent", { backend: local }, /options\.agent: is required/],
    ["a logger without pino's methods", { ...base, logger: { log() {} } }, /options\.logger: must have debug, info, warn and error functions/],
    ["a tracer that is not one", { ...base, tracer: {} }, /options\.tracer: must be an OpenTelemetry tracer \(with startSpan\) or false/],
    ["logPayloads as a string", { ...base, logPayloads: "yes" }, /options\.logPayloads: must be a boolean/],
    ["both agent id and create", { ...base, agent: { id: "a", create: { model: "m" } } }, /options\.agent: takes either id or create/],
    ["an empty agent id", { ...base, agent: { id: " " } }, /options\.agent\.id: must not be empty/],
    ["create without a model", { ...base, agent: { create: {} } }, /options\.agent\.create\.model: is required/],
    ["a typo'd option (`tool:`)", { ...base, tool: [] }, /options\.tool: is not an option \(did you mean "tools"\?\)/],
    ["mode \"default\" (another SDK's name)", { ...base, mode: "default" }, /options\.mode: must be "standard", "acceptEdits", "unrestricted" or "strict"/],
    ["a non-string clientInfo.name", { ...base, clientInfo: { name: 5 } }, /options\.clientInfo\.name: must be a string/],
    ["an unknown clientInfo key", { ...base, clientInfo: { name: "app", vendor: "x" } }, /options\.clientInfo\.vendor: is not an option/],
    ["a cloud backend without environment", { ...base, backend: { ...cloud, environment: undefined } }, /options\.backend\.environment: is required/],
    ["an empty cloud environment", { ...base, backend: { ...cloud, environment: {} } }, /options\.backend\.environment: needs exactly one of/],
    ["a cloud environment with two selectors", { ...base, backend: { ...cloud, environment: { name: "a", id: "b" } } }, /options\.backend\.environment: needs exactly one of/],
    ["a typo'd cloud option", { ...base, backend: { ...cloud, enviroment: { name: "a" } } }, /options\.backend\.enviroment: is not an option/],
    ["a non-http cloud baseUrl", { ...base, backend: { ...cloud, baseUrl: "ftp://example.invalid" } }, /options\.backend\.baseUrl: must be an http\(s\) URL/],
    ["a cloud auth mode that does not exist", { ...base, backend: { ...cloud, auth: "cookie" } }, /options\.backend\.auth: must be "header" or "query"/],
    ["local with both url and spawn", { ...base, backend: { ...local, spawn: true } }, /options\.backend: .*exactly one of `url`/],
    ["local with neither url nor spawn", { ...base, backend: { kind: "local" } }, /options\.backend: .*exactly one of `url`/],
    ["a local url with a token query", { ...base, backend: { ...local, url: `${url}?token=x` } }, /token/],
    ["a negative tool timeout", { ...base, toolTimeoutMs: -1 }, /options\.toolTimeoutMs: must be > 0/],
    ["a NaN input limit", { ...base, maxInputBytes: Number.NaN }, /options\.maxInputBytes: must be a number/],
    ["a fractional result limit", { ...base, maxResultChars: 1.5 }, /options\.maxResultChars: must be an integer/],
    ["a negative stall probe", { ...base, turnStallProbeMs: -1 }, /options\.turnStallProbeMs: must be >= 0/],
    ["tools that are not an array", { ...base, tools: "get_weather" }, /options\.tools: must be an array/],
    ["a workspace that is neither", { ...base, workspace: "shared" }, /options\.workspace: must be "isolated" or \{ cwd/],
    ["an isolated workspace on cloud", { ...base, workspace: "isolated", backend: cloud }, /options\.workspace: "isolated" applies to the local backend only/],
    ["a canUseTool that is not a function", { ...base, canUseTool: "allow" }, /options\.canUseTool: must be a function/],
    ["a signal that is not an AbortSignal", { ...base, signal: { aborted: false } }, /options\.signal: must be an AbortSignal/],
    ["a call cache of zero entries", { ...base, callLimits: { maxCachedCalls: 0 } }, /options\.callLimits\.maxCachedCalls: must be > 0/],
    ["an unknown call limit", { ...base, callLimits: { maxCachd: 5 } }, /options\.callLimits\.maxCachd/],
    ["a fractional maxConcurrentCalls", { ...base, maxConcurrentCalls: 2.5 }, /options\.maxConcurrentCalls: must be an integer/],
  ];
}
