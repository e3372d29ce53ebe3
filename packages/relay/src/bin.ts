#!/usr/bin/env node
/**
 * Executable entry of the relay CLI (`toolrelay-relay`): runs {@link runRelayCli} with the
 * process arguments and stops the relay cleanly on SIGINT / SIGTERM (exit code 0).
 */
import { runRelayCli } from "./cli.js";

void runRelayCli(process.argv.slice(2)).then((relay) => {
  if (!relay) return;
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    relay.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
});
