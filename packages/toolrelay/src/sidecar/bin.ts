#!/usr/bin/env node
/**
 * Executable entry of `toolrelay-sidecar`. It guards stdout and stderr first
 * (stdio-guard.ts: only frames on stdout), and only then loads the sidecar
 * and the SDK, so that not even a module's top-level code can write to the
 * host's frame stream. Exits with {@link runSidecarCli}'s code as soon as the
 * sidecar stopped (the host's `shutdown`, or the host gone: within 1 s of
 * stdin's end), or at once after `--help`, `--version` or a usage error; 70
 * if it failed (a bug).
 */
import { guardStdio } from "./stdio-guard.js";

const stdio = guardStdio({ debug: process.argv.slice(2).includes("--debug") });
import("./cli.js")
  .then(({ runSidecarCli }) => runSidecarCli(process.argv.slice(2), stdio))
  .then(
    (code) => process.exit(code),
    () => process.exit(70),
  );
