/**
 * Two tenants on one relay: tenant B tries, with its own key, every way to read, write, open,
 * take over or re-register what tenant A owns — A's environment listing, A's status sockets and
 * session, A's listener socket and device, A's outstanding tool call — and every attempt is
 * counted. None may succeed, and afterwards A's listener, session and pending call are exactly
 * as they were (same sockets, no close code, the call still answerable). Prints the table.
 * The scenario is support-security/tenancy-scenario.ts (security-tenancy-cluster.test.ts runs it
 * across three cluster nodes).
 */
import { startRelay } from "../../packages/relay/src/index.js";
import { describeTenancy } from "./support-security/tenancy-scenario.js";

describeTenancy("two tenants", async (options) => {
  const relay = await startRelay(options);
  return { relay, origins: [relay.httpUrl], stop: () => relay.close() };
});
