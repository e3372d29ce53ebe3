#!/usr/bin/env node
/**
 * Executable entry of the bridge CLI (`toolrelay-openai`): runs {@link runOpenAiCli} with the
 * process arguments and stops the bridge cleanly on SIGINT / SIGTERM (exit code 0).
 */
import { runOpenAiCli } from "./cli.js";

void runOpenAiCli(process.argv.slice(2)).then((bridge) => {
  if (!bridge) return;
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    bridge.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
});
