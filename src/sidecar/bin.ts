#!/usr/bin/env node
/**
 * Executable entry of `toolrelay-sidecar`: runs {@link runSidecarCli} on the
 * process's stdio and exits with its code as soon as the sidecar stopped (the
 * host's `shutdown`, or the host gone: within 1 s of stdin's end).
 */
import { runSidecarCli } from "./cli.js";

void runSidecarCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  () => process.exit(70),
);
