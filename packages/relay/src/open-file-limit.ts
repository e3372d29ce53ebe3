/**
 * The connection cap against the process's open-file limit (docs/relay.md "Connections and the
 * open-file limit"). Every connection the relay holds is a descriptor; past the limit `accept`
 * fails with EMFILE, and the relay would stop taking connections without saying why, while
 * `maxConnections` promised more. So at start the relay reads the limit (Linux:
 * `/proc/self/limits`; Node raises its soft limit to the hard one as it starts, so this is the
 * most the process can open) and checks `maxConnections` plus room for its other descriptors
 * against it: a cap the caller chose that does not fit is refused, naming both numbers and the
 * option; the default that does not fit is lowered to what fits, with a warning. Where the
 * limit cannot be read (not Linux, no /proc) or is `unlimited`, nothing is checked and the
 * relay says so at debug level.
 */
import { readFileSync } from "node:fs";
import { ToolrelayError } from "toolrelay/protocol";
import type { RelayLogger, ResolvedRelayOptions } from "./relay-options.js";

/** Descriptors the relay holds besides its connections: stdio, the listening socket, epoll, libuv's pipes, files. */
export const BASE_DESCRIPTOR_HEADROOM = 64;
/** Descriptors one sandbox's listener process holds open in the relay (its stdout and stderr pipes, with room to spare). */
export const DESCRIPTORS_PER_SANDBOX = 4;
/** Where Linux shows the process's limits. */
export const PROC_LIMITS_PATH = "/proc/self/limits";

/**
 * The soft open-file limit in a `/proc/<pid>/limits` text (the `Max open files` row), or
 * `undefined` when the row is missing or says `unlimited`.
 */
export function parseOpenFileLimit(limitsText: string): number | undefined {
  const row = /^Max open files\s+(\S+)\s+(\S+)/m.exec(limitsText);
  if (!row?.[1] || !/^\d+$/.test(row[1])) return undefined;
  return Number(row[1]);
}

/** This process's open-file limit, or `undefined` where it cannot be read (not Linux) or has none. */
export function readOpenFileLimit(path: string = PROC_LIMITS_PATH): number | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
  return parseOpenFileLimit(text);
}

/** What {@link fitConnectionCap} needs: the cap, whether the caller chose it, the room for other descriptors, the limit. */
export interface ConnectionCapCheck {
  maxConnections: number;
  /** `true` when `maxConnections` was given (option or `--max-connections`), `false` for the default. */
  chosen: boolean;
  /** Descriptors kept free for everything but connections. */
  headroom: number;
  /** The open-file limit; `undefined`: unknown or none (nothing is checked). */
  openFileLimit: number | undefined;
  logger: RelayLogger;
}

/**
 * The connection cap to run with: `maxConnections` when it fits under the limit with the
 * headroom; the largest that fits (with a warning) when the default does not; throws
 * `INVALID_OPTIONS` when a chosen cap does not fit, or when not even 2 connections fit.
 */
export function fitConnectionCap(check: ConnectionCapCheck): number {
  const { maxConnections, chosen, headroom, openFileLimit, logger } = check;
  if (openFileLimit === undefined) {
    logger.debug("relay: the open-file limit is unknown (no /proc/self/limits); maxConnections is not checked against it", {
      maxConnections,
    });
    return maxConnections;
  }
  const fits = openFileLimit - headroom;
  if (maxConnections <= fits) return maxConnections;
  const advice = `lower maxConnections (--max-connections) to at most ${Math.max(fits, 0)}, or raise the limit (ulimit -n, systemd LimitNOFILE=)`;
  if (chosen || fits < 2) {
    throw new ToolrelayError(
      "INVALID_OPTIONS",
      `relay: maxConnections ${maxConnections} plus ${headroom} descriptors for everything else is more than this process's open-file limit ${openFileLimit}; ${fits < 2 ? "raise the limit (ulimit -n, systemd LimitNOFILE=)" : advice}`,
    );
  }
  logger.warn(`relay: maxConnections lowered from its default ${maxConnections} to ${fits} to fit the open-file limit`, {
    openFileLimit,
    headroom,
  });
  return fits;
}

/** Descriptors kept free for everything but connections: the base, and each sandbox the tenants may run. */
export function descriptorHeadroom(options: Pick<ResolvedRelayOptions, "keys" | "sandbox" | "maxSandboxesPerTenant">): number {
  if (options.sandbox === undefined) return BASE_DESCRIPTOR_HEADROOM;
  const tenants = Math.max(1, new Set([...options.keys.values()].map((key) => key.tenant)).size);
  return BASE_DESCRIPTOR_HEADROOM + DESCRIPTORS_PER_SANDBOX * options.maxSandboxesPerTenant * tenants;
}

/** `resolved` with its connection cap checked against (or fitted to) this process's open-file limit. */
export function fitToOpenFileLimit(
  resolved: ResolvedRelayOptions,
  chosen: boolean,
  openFileLimit: number | undefined = readOpenFileLimit(),
): ResolvedRelayOptions {
  const maxConnections = fitConnectionCap({
    maxConnections: resolved.maxConnections,
    chosen,
    headroom: descriptorHeadroom(resolved),
    openFileLimit,
    logger: resolved.logger,
  });
  return maxConnections === resolved.maxConnections ? resolved : { ...resolved, maxConnections };
}
