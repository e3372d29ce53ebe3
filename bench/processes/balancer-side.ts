/**
 * The TCP balancer of benchmark 10, in its own process (a cloud L4 load balancer is its own box;
 * in the bench process it would share the SDK's event loop): round-robin proxies from
 * integration/support/round-robin-proxy.ts, no sticky sessions. Commands: `start` (a proxy to
 * `targets`, answers its id and port), `setTargets` (the targets of the next connections),
 * `counts` (accepted connections per target so far).
 *
 * The proxy forwards segments at once (TCP_NODELAY on both sides), as a cloud L4 balancer does.
 */
import { serveParent } from "../harness/child-process.js";
import { startRoundRobinProxy, type ProxyTarget, type RoundRobinProxy } from "../../integration/support/round-robin-proxy.js";

const proxies: RoundRobinProxy[] = [];

function proxy(message: Record<string, unknown>): RoundRobinProxy {
  const found = proxies[message.proxy as number];
  if (!found) throw new Error(`balancer-side: no proxy ${String(message.proxy)}`);
  return found;
}

const parent = serveParent(async (cmd, message) => {
  switch (cmd) {
    case "start": {
      const started = await startRoundRobinProxy(message.targets as ProxyTarget[]);
      proxies.push(started);
      return { proxy: proxies.length - 1, port: started.port, url: started.url };
    }
    case "setTargets":
      proxy(message).setTargets(message.targets as ProxyTarget[]);
      return {};
    case "counts":
      return { counts: proxy(message).counts(), open: proxy(message).connections() };
    default:
      throw new Error(`unknown command ${cmd}`);
  }
});
parent.ready({ pid: process.pid });

process.on("SIGTERM", () => {
  void Promise.all(proxies.map((started) => started.close())).finally(() => process.exit(0));
});
