#!/usr/bin/env node
/**
 * Executable entry of the relay CLI (`toolrelay-relay`): runs {@link runRelayCli} with the
 * process arguments, sets the exit code it reports (0 ok, 1 could not start, 2 a bad command
 * line), and stops the relay cleanly on SIGINT / SIGTERM (exit code 0) — also when the signal
 * arrives while it is starting (right after it printed its address, say): it closes once started.
 */
import { runRelayCli } from "./cli.js";
import type { Relay } from "./relay.js";

let relay: Relay | undefined;
let stopping = false;
const close = (started: Relay): void => {
  started.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  if (relay) close(relay);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);

void runRelayCli(process.argv.slice(2)).then(({ exitCode, relay: started }) => {
  process.exitCode = exitCode;
  if (!started) {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    return;
  }
  relay = started;
  if (stopping) close(started);
});
