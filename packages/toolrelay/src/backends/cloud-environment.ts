import type { Letta } from "@letta-ai/letta-client";
import { ToolrelayError } from "../errors.js";
import { toRestError } from "./letta-rest-client.js";

/**
 * Which Letta Cloud environment to attach to. Exactly one key:
 * - `connectionId`: the environment's relay connection id (used as is, no lookup);
 * - `name`: its `connectionName` (e.g. the `--env-name` given to `letta server`);
 * - `id`: its environment id;
 * - `deviceId`: the device id of the machine or sandbox running the listener.
 */
export type CloudEnvironmentSelector = { connectionId: string } | { name: string } | { id: string } | { deviceId: string };

/** One environment as listed by `GET /v1/environments`, reduced to what the SDK uses. */
export interface CloudEnvironment {
  id: string;
  /** The relay connection id; `null` when the environment is registered but its listener is not connected. */
  connectionId: string | null;
  deviceId: string;
  name: string;
  /** Epoch ms of the current connection, or `null`. */
  connectedAt: number | null;
}

/** Pages of `GET /v1/environments` read at most, as a guard against a cursor that never ends. */
const MAX_PAGES = 50;

/** Read every page of `GET /v1/environments`. */
export async function listCloudEnvironments(client: Letta): Promise<CloudEnvironment[]> {
  const environments: CloudEnvironment[] = [];
  const seen = new Set<string>();
  let after: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    let response: Awaited<ReturnType<Letta["environments"]["list"]>>;
    try {
      response = await client.environments.list(after === undefined ? {} : { after });
    } catch (error) {
      throw toRestError(error, "list Letta environments");
    }
    const connections = Array.isArray(response?.connections) ? response.connections : [];
    let progressed = false;
    for (const connection of connections) {
      if (typeof connection?.id !== "string" || seen.has(connection.id)) continue;
      seen.add(connection.id);
      progressed = true;
      environments.push({
        id: connection.id,
        connectionId: typeof connection.connectionId === "string" && connection.connectionId !== "" ? connection.connectionId : null,
        deviceId: String(connection.deviceId ?? ""),
        name: String(connection.connectionName ?? ""),
        connectedAt: epochMs(connection.connectedAt),
      });
    }
    if (response?.hasNextPage !== true || !progressed) break;
    after = environments[environments.length - 1]!.id;
  }
  return environments;
}

/**
 * Find one environment through `GET /v1/environments` (all pages) by name,
 * id, connectionId or deviceId. Several environments with the same name: the
 * connected one with the newest `connectedAt` wins.
 *
 * Rejects with NOT_FOUND when nothing matches (the message lists the
 * candidates) or when the match has no live connection; with UNAUTHORIZED /
 * NOT_FOUND / REST_FAILED when the REST call fails (the client's error as `cause`).
 */
export async function resolveCloudEnvironment(
  client: Letta,
  selector: CloudEnvironmentSelector,
): Promise<CloudEnvironment & { connectionId: string }> {
  const [field, wanted] = selectorEntry(selector);
  const environments = await listCloudEnvironments(client);
  const matches = environments.filter((environment) => fieldValue(environment, field) === wanted);
  if (matches.length === 0) {
    const candidates = environments.map((environment) => ({
      name: environment.name,
      id: environment.id,
      connectionId: environment.connectionId,
      deviceId: environment.deviceId,
    }));
    const listed = candidates.slice(0, 10).map((candidate) => `${JSON.stringify(candidate.name)} (id ${candidate.id})`);
    const more = candidates.length > 10 ? ` and ${candidates.length - 10} more` : "";
    throw new ToolrelayError(
      "NOT_FOUND",
      `no Letta environment with ${field} ${JSON.stringify(wanted)}; ` +
        (candidates.length === 0 ? "the account has no environments" : `candidates: ${listed.join(", ")}${more}`),
      { details: { field, value: wanted, candidates } },
    );
  }
  const ranked = [...matches].sort((a, b) => rank(b) - rank(a));
  const chosen = ranked[0]!;
  if (chosen.connectionId === null) {
    throw new ToolrelayError(
      "NOT_FOUND",
      `Letta environment ${JSON.stringify(chosen.name)} (id ${chosen.id}) is registered but not connected: start its listener first`,
      { details: { field, value: wanted, environment: chosen } },
    );
  }
  return { ...chosen, connectionId: chosen.connectionId };
}

/** Epoch ms from a number or an ISO date string (relays differ); anything else is `null`. */
function epochMs(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value === "string") {
    const parsed = Date.parse(value);
    return Number.isFinite(parsed) ? parsed : null;
  }
  return null;
}

type SelectorField = "connectionId" | "name" | "id" | "deviceId";

function selectorEntry(selector: CloudEnvironmentSelector): [SelectorField, string] {
  const entries = Object.entries(selector ?? {}).filter(([, value]) => value !== undefined);
  const [entry] = entries;
  if (entries.length !== 1 || entry === undefined || !["connectionId", "name", "id", "deviceId"].includes(entry[0])) {
    throw new ToolrelayError("INVALID_OPTIONS", "backend.environment needs exactly one of connectionId, name, id or deviceId");
  }
  if (typeof entry[1] !== "string" || entry[1].trim() === "") {
    throw new ToolrelayError("INVALID_OPTIONS", `backend.environment.${entry[0]} must be a non-empty string`);
  }
  return [entry[0] as SelectorField, entry[1]];
}

function fieldValue(environment: CloudEnvironment, field: SelectorField): string | null {
  return field === "name" ? environment.name : environment[field];
}

/** Connected first, then the newest connection. */
function rank(environment: CloudEnvironment): number {
  if (environment.connectionId === null) return -1;
  return environment.connectedAt ?? 0;
}
