/**
 * The environments the relay knows, keyed on the listener's (deviceId, listenerInstanceId) and
 * on the connection id handed out at registration. A registration for a known key keeps the
 * environment and its connection id; only a removed environment (1008) yields a new one.
 */
import { createHash, randomUUID } from "node:crypto";
import { Environment } from "./environment.js";
import type { RelayEmit } from "./relay-events.js";
import type { ListenerMode, ResolvedRelayOptions } from "./relay-options.js";

/** `POST /v1/environments/register` body, validated. */
export interface RegistrationRequest {
  deviceId: string;
  listenerInstanceId: string | undefined;
  connectionName: string;
  metadata: Record<string, unknown> | undefined;
}

/** `POST /v1/environments/register` answer. */
export interface RegistrationAnswer {
  connectionId: string;
  wsUrl: string;
  supportsSplitStatusChannels: boolean;
  supportsPairedListenerGenerations: boolean;
}

const MAX_ID_LENGTH = 512;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function boundedString(value: unknown, allowEmpty: boolean): value is string {
  return typeof value === "string" && value.length <= MAX_ID_LENGTH && (allowEmpty || value.length > 0);
}

/** Checks a register body; returns an error text for a 400 answer. */
export function parseRegistration(body: unknown): RegistrationRequest | string {
  if (!isRecord(body)) return "body must be a JSON object";
  if (!boundedString(body.deviceId, false)) return "deviceId must be a non-empty string";
  if (!boundedString(body.connectionName, false)) return "connectionName must be a non-empty string";
  if (body.listenerInstanceId !== undefined && !boundedString(body.listenerInstanceId, false)) {
    return "listenerInstanceId must be a non-empty string when present";
  }
  if (body.metadata !== undefined && !isRecord(body.metadata)) return "metadata must be an object when present";
  return {
    deviceId: body.deviceId,
    listenerInstanceId: body.listenerInstanceId as string | undefined,
    connectionName: body.connectionName,
    metadata: body.metadata as Record<string, unknown> | undefined,
  };
}

function environmentKey(deviceId: string, listenerInstanceId: string | undefined): string {
  return JSON.stringify([deviceId, listenerInstanceId ?? null]);
}

export class ListenerRegistry {
  private readonly byKey = new Map<string, Environment>();
  private readonly byConnectionId = new Map<string, Environment>();

  constructor(
    private readonly options: ResolvedRelayOptions,
    private readonly emit: RelayEmit,
  ) {}

  /** Registers (or re-registers) a listener; `wsBase` is `ws://host:port` as the listener reached us. */
  register(request: RegistrationRequest, wsBase: string): { environment: Environment; answer: RegistrationAnswer } {
    const key = environmentKey(request.deviceId, request.listenerInstanceId);
    let environment = this.byKey.get(key);
    if (environment) {
      // A registration means a fresh listener runtime: an older process holding this identity is
      // replaced (the listener exits on exactly this close), and calls it owned cannot be answered.
      environment.listener.close(1000, "Replaced by new connection");
      environment.forgetOutstandingCalls();
      this.options.logger.info("relay: listener registered again", { connectionId: environment.identity.connectionId });
    } else {
      const id = `environment-${createHash("sha256").update(key).digest("hex").slice(0, 24)}`;
      environment = new Environment(
        {
          id,
          connectionId: `env-${randomUUID()}`,
          deviceId: request.deviceId,
          listenerInstanceId: request.listenerInstanceId,
          connectionName: request.connectionName,
        },
        this.options,
        this.emit,
        (expired) => this.remove(expired, 1008, 1008, "Environment gone: listener did not reconnect"),
      );
      this.byKey.set(key, environment);
      this.byConnectionId.set(environment.identity.connectionId, environment);
      this.options.logger.info("relay: listener registered", { connectionId: environment.identity.connectionId });
      this.emit("environment-registered", environment.info());
    }
    const connectionId = environment.identity.connectionId;
    const mode: ListenerMode = this.options.listenerMode;
    return {
      environment,
      answer: {
        connectionId,
        wsUrl: `${wsBase}/v1/environments/${encodeURIComponent(connectionId)}/listener/ws`,
        supportsSplitStatusChannels: mode !== "single",
        supportsPairedListenerGenerations: mode === "paired",
      },
    };
  }

  get(connectionId: string): Environment | undefined {
    return this.byConnectionId.get(connectionId);
  }

  list(): Environment[] {
    return [...this.byConnectionId.values()];
  }

  /** Removes an environment; its sockets are closed with the given codes. */
  remove(environment: Environment, listenerCode: number, sdkCode: number, reason: string): void {
    const { connectionId, deviceId, listenerInstanceId } = environment.identity;
    if (this.byConnectionId.get(connectionId) !== environment) return;
    this.byConnectionId.delete(connectionId);
    this.byKey.delete(environmentKey(deviceId, listenerInstanceId));
    environment.remove(listenerCode, sdkCode, reason);
    this.options.logger.info("relay: environment removed", { connectionId, reason });
    this.emit("environment-removed", connectionId, reason);
  }

  /** Shutdown: every environment removed, sockets closed as "going away". */
  removeAll(reason: string): void {
    for (const environment of this.list()) this.remove(environment, 1001, 1001, reason);
  }

  sweep(): void {
    for (const environment of this.byConnectionId.values()) environment.sweep();
  }
}
