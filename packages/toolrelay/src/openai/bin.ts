#!/usr/bin/env node
/**
 * Executable entry of the bridge CLI (`toolrelay-openai`): runs {@link runOpenAiCli} with the
 * process arguments, sets the exit code it reports (0 ok, 1 could not start — an upstream out of
 * reach, a port in use —, 2 a bad command line), and stops the bridge cleanly on SIGINT / SIGTERM
 * (exit code 0).
 */
import { runOpenAiCli } from "./cli.js";

void runOpenAiCli(process.argv.slice(2)).then(({ exitCode, bridge }) => {
  process.exitCode = exitCode;
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
