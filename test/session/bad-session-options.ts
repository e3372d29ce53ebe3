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
    [
      "a logger without pino's methods",
      { ...base, logger: { log() {} } },
      /options\.logger: must have debug, info, warn and error functions/,
    ],
    ["a tracer that is not one", { ...base, tracer: {} }, /options\.tracer: must be an OpenTelemetry tracer \(with startSpan\) or false/],
    ["logPayloads as a string", { ...base, logPayloads: "yes" }, /options\.logPayloads: must be a boolean/],
    [
      "a listener for an event that does not exist",
      { ...base, on: { "tool-call-ended": () => {} } },
      /options\.on\["tool-call-ended"\]: is not an option/,
    ],
    [
      "a listener that is not a function",
      { ...base, on: { "tool-call-end": "console.log" } },
      /options\.on\["tool-call-end"\]: must be a function/,
    ],
    ["listeners as a function", { ...base, on: () => {} }, /options\.on: must be an object of listeners by event name/],
    ["both agent id and create", { ...base, agent: { id: "a", create: { model: "m" } } }, /options\.agent: takes either id or create/],
    ["an empty agent id", { ...base, agent: { id: " " } }, /options\.agent\.id: must not be empty/],
    ["create without a model", { ...base, agent: { create: {} } }, /options\.agent\.create\.model: is required/],
    ["a typo'd option (`tool:`)", { ...base, tool: [] }, /options\.tool: is not an option \(did you mean "tools"\?\)/],
    [
      'mode "default" (another SDK\'s name)',
      { ...base, mode: "default" },
      /options\.mode: must be "standard", "acceptEdits", "unrestricted" or "strict"/,
    ],
    ["a non-string clientInfo.name", { ...base, clientInfo: { name: 5 } }, /options\.clientInfo\.name: must be a string/],
    ["an unknown clientInfo key", { ...base, clientInfo: { name: "app", vendor: "x" } }, /options\.clientInfo\.vendor: is not an option/],
    [
      "a cloud backend without environment",
      { ...base, backend: { ...cloud, environment: undefined } },
      /options\.backend\.environment: is required/,
    ],
    [
      "an empty cloud environment",
      { ...base, backend: { ...cloud, environment: {} } },
      /options\.backend\.environment: needs exactly one of/,
    ],
    [
      "a cloud environment with two selectors",
      { ...base, backend: { ...cloud, environment: { name: "a", id: "b" } } },
      /options\.backend\.environment: needs exactly one of/,
    ],
    [
      "a typo'd cloud option",
      { ...base, backend: { ...cloud, enviroment: { name: "a" } } },
      /options\.backend\.enviroment: is not an option/,
    ],
    [
      "a non-http cloud baseUrl",
      { ...base, backend: { ...cloud, baseUrl: "ftp://example.invalid" } },
      /options\.backend\.baseUrl: must be an http\(s\) URL/,
    ],
    [
      "a cloud auth mode that does not exist",
      { ...base, backend: { ...cloud, auth: "cookie" } },
      /options\.backend\.auth: must be "header" or "query"/,
    ],
    ["local with both url and spawn", { ...base, backend: { ...local, spawn: true } }, /options\.backend: .*exactly one of `url`/],
    ["local with neither url nor spawn", { ...base, backend: { kind: "local" } }, /options\.backend: .*exactly one of `url`/],
    ["a local url with a token query", { ...base, backend: { ...local, url: `${url}?token=x` } }, /token/],
    ["a negative tool timeout", { ...base, toolTimeoutMs: -1 }, /options\.toolTimeoutMs: must be > 0/],
    ["a NaN input limit", { ...base, maxInputBytes: Number.NaN }, /options\.maxInputBytes: must be a number/],
    ["a fractional result limit", { ...base, maxResultChars: 1.5 }, /options\.maxResultChars: must be an integer/],
    ["a negative stall probe", { ...base, turnStallProbeMs: -1 }, /options\.turnStallProbeMs: must be >= 0/],
    ["tools that are not an array", { ...base, tools: "get_weather" }, /options\.tools: must be an array/],
    ["a workspace that is neither", { ...base, workspace: "shared" }, /options\.workspace: must be "isolated" or \{ cwd/],
    [
      "an isolated workspace on cloud",
      { ...base, workspace: "isolated", backend: cloud },
      /options\.workspace: "isolated" applies to the local backend only/,
    ],
    ["a canUseTool that is not a function", { ...base, canUseTool: "allow" }, /options\.canUseTool: must be a function/],
    ["a signal that is not an AbortSignal", { ...base, signal: { aborted: false } }, /options\.signal: must be an AbortSignal/],
    ["a call cache of zero entries", { ...base, callLimits: { maxCachedCalls: 0 } }, /options\.callLimits\.maxCachedCalls: must be > 0/],
    ["an unknown call limit", { ...base, callLimits: { maxCachd: 5 } }, /options\.callLimits\.maxCachd/],
    ["no room for any call", { ...base, maxConcurrentCalls: 0 }, /options\.maxConcurrentCalls: must be > 0/],
    ["a fractional tool timeout", { ...base, toolTimeoutMs: 1.5 }, /options\.toolTimeoutMs: must be an integer/],
    ["an input limit given as a string", { ...base, maxInputBytes: "1" }, /options\.maxInputBytes: must be a number/],
    [
      "a grace past a timer's longest delay",
      { ...base, reconnectGraceMs: 2 ** 31 },
      /options\.reconnectGraceMs: must be at most 2147483647/,
    ],
    ["a negative cache age", { ...base, callLimits: { cacheAgeMs: -1 } }, /options\.callLimits\.cacheAgeMs: must be > 0/],
    ["a fractional maxConcurrentCalls", { ...base, maxConcurrentCalls: 2.5 }, /options\.maxConcurrentCalls: must be an integer/],
    ...badSandboxOptions(base, cloud),
  ];
}

/** The `backend.sandbox` rows (SDK-managed cloud sandboxes). */
function badSandboxOptions(base: Record<string, unknown>, cloud: Record<string, unknown>): BadOptionCase[] {
  const commit = "0123456789abcdef0123456789abcdef01234567";
  const sandbox = (options: unknown) => ({
    ...base,
    agent: { id: "agent-1" },
    backend: { ...cloud, environment: undefined, sandbox: options },
  });
  const repository = (entry: Record<string, unknown>) =>
    sandbox({ githubRepositories: [{ owner: "letta-ai", repo: "letta-code", commit, ...entry }] });
  return [
    [
      "both environment and sandbox",
      { ...base, agent: { id: "agent-1" }, backend: { ...cloud, sandbox: {} } },
      /options\.backend: takes only one of `environment` or `sandbox`/,
    ],
    ["a sandbox that is not an object", sandbox(true), /options\.backend\.sandbox: must be an object/],
    ["a typo'd sandbox option", sandbox({ ttlMinute: 5 }), /options\.backend\.sandbox\.ttlMinute: is not an option/],
    ["a TTL of 0 minutes", sandbox({ ttlMinutes: 0 }), /options\.backend\.sandbox\.ttlMinutes: must be 1-60 minutes/],
    ["a TTL of 61 minutes", sandbox({ ttlMinutes: 61 }), /options\.backend\.sandbox\.ttlMinutes: must be 1-60 minutes/],
    ["a fractional TTL", sandbox({ ttlMinutes: 1.5 }), /options\.backend\.sandbox\.ttlMinutes: must be a whole number/],
    [
      "an unknown sandbox class",
      sandbox({ sandboxClass: "gpu" }),
      /options\.backend\.sandbox\.sandboxClass: must be "linux-vm" or "container"/,
    ],
    ["an unknown create route", sandbox({ createRoute: "v2" }), /options\.backend\.sandbox\.createRoute: must be "agent" or "sandboxes"/],
    ["a negative ready timeout", sandbox({ readyTimeoutMs: -1 }), /options\.backend\.sandbox\.readyTimeoutMs: must be > 0/],
    ["a zero refresh interval", sandbox({ refreshIntervalMs: 0 }), /options\.backend\.sandbox\.refreshIntervalMs: must be > 0/],
    [
      "eleven repositories",
      sandbox({ githubRepositories: Array.from({ length: 11 }, (_, index) => ({ owner: "o", repo: `r${index}`, commit })) }),
      /options\.backend\.sandbox\.githubRepositories: takes at most 10/,
    ],
    [
      "a repository named twice",
      sandbox({
        githubRepositories: [
          { owner: "o", repo: "r", commit },
          { owner: "O", repo: "R", commit },
        ],
      }),
      /githubRepositories: names a repository twice/,
    ],
    ["a short commit", repository({ commit: "abc1234" }), /githubRepositories\[0\]\.commit: must be a full 40-hex-digit commit SHA/],
    [
      "a branch instead of a commit",
      repository({ commit: "main" }),
      /githubRepositories\[0\]\.commit: must be a full 40-hex-digit commit SHA/,
    ],
    [
      "an owner with a slash",
      repository({ owner: "letta-ai/letta" }),
      /githubRepositories\[0\]\.owner: must be a GitHub user or organisation/,
    ],
    [
      "an owner ending in a hyphen",
      repository({ owner: "letta-" }),
      /githubRepositories\[0\]\.owner: must be a GitHub user or organisation/,
    ],
    ["a repo named ..", repository({ repo: ".." }), /githubRepositories\[0\]\.repo: must be a GitHub repository name/],
    [
      "a repository without a repo",
      sandbox({ githubRepositories: [{ owner: "o", commit }] }),
      /githubRepositories\[0\]\.repo: is required/,
    ],
    [
      "the agent route without an agent id",
      { ...base, backend: { ...cloud, environment: undefined, sandbox: {} } },
      /options\.backend\.sandbox\.createRoute: is "agent" \(the default\).*agent: \{ id \}/,
    ],
  ];
}
