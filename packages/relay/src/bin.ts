#!/usr/bin/env node
/**
 * Executable entry of the relay CLI (`toolrelay-relay`): runs {@link runRelayCli} with the
 * process arguments, sets the exit code it reports (0 ok, 1 could not start, 2 a bad command
 * line), and stops the relay cleanly on SIGINT / SIGTERM (exit code 0).
 */
import { runRelayCli } from "./cli.js";

void runRelayCli(process.argv.slice(2)).then(({ exitCode, relay }) => {
  process.exitCode = exitCode;
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
