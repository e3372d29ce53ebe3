/**
 * Test helper process for integration/peer-harness.test.ts: starts a scripted model and a real
 * app-server, prints `PEER <pid> <home>` and then waits to be killed. The test SIGKILLs this
 * process and checks that the harness's safety net takes the app-server down with it.
 *
 *   node --import tsx integration/support/orphan-probe.ts
 */
import { startLettaAppServer } from "../../test/support/letta-peer-process.js";
import { startScriptedModelServer } from "../../test/support/scripted-model-server.js";

const model = await startScriptedModelServer();
const peer = await startLettaAppServer({ modelUrl: model.url });
process.stdout.write(`PEER ${peer.pid} ${peer.home}\n`);
// Stay alive until killed (at most a minute, so a forgotten probe cannot linger).
setTimeout(() => {
  void peer.stop().then(() => model.close());
}, 60_000);
