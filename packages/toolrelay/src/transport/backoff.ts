/**
 * Reconnect delays: the first retry is fast, later ones grow exponentially with
 * full jitter up to a cap. Pure; the random source is injectable for tests.
 */
export interface BackoffOptions {
  /** Delay before the first retry, in ms. Default 50. */
  initialDelayMs?: number | undefined;
  /** Upper bound of any delay, in ms. Default 5_000. */
  maxDelayMs?: number | undefined;
  /** Growth factor per attempt. Default 2. */
  factor?: number | undefined;
  /** Random source in [0, 1). Default Math.random. */
  random?: (() => number) | undefined;
}

export type Backoff = (attempt: number) => number;

/** `attempt` counts from 0 (the first retry). */
export function exponentialBackoff(options: BackoffOptions = {}): Backoff {
  const initialDelayMs = options.initialDelayMs ?? 50;
  const maxDelayMs = options.maxDelayMs ?? 5_000;
  const factor = options.factor ?? 2;
  const random = options.random ?? Math.random;
  return (attempt) => {
    if (attempt <= 0) return Math.min(initialDelayMs, maxDelayMs) * (0.5 + random() / 2);
    const ceiling = Math.min(maxDelayMs, initialDelayMs * factor ** attempt);
    return Math.max(initialDelayMs / 2, ceiling * random());
  };
}
