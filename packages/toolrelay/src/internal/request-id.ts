import { randomBytes } from "node:crypto";

const processNonce = randomBytes(4).toString("hex");
let counter = 0;

/**
 * A request id unique across clients and processes: `<prefix>-<nonce>-<n>`.
 * The runtime correlates answers by `request_id`, so two clients on one
 * app-server must never mint the same id.
 */
export function nextRequestId(prefix: string): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${prefix}-${processNonce}-${counter}`;
}
