/**
 * Inside one tenant (two keys, one environment, two runtimes): forged tool answers, reads of
 * another runtime's frames, `sessionId` reuse, `request_id` reuse and listener sockets without
 * (or with another) device id are refused; the legitimate client of each thing keeps it.
 * Every attempt is counted; prints the table. The scenario is support-security/same-tenant-scenario.ts
 * (security-same-tenant-cluster.test.ts runs it across three cluster nodes).
 */
import { startRelay } from "../../packages/relay/src/index.js";
import { describeSameTenant } from "./support-security/same-tenant-scenario.js";

describeSameTenant("one tenant", async (options) => {
  const relay = await startRelay(options);
  return { relay, stop: () => relay.close() };
});
