/** The API key the bench relay accepts (loopback only; not a secret). */
export const RELAY_BENCH_KEY = "toolrelay-bench-key-0123456789";
