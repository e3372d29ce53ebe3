/**
 * The protocol's JSON Schemas, one per frame type, generated from the zod
 * schemas (host-frames.ts, sidecar-frames.ts) that the sidecar itself checks
 * frames with — so the published schemas cannot drift from the code. Also in
 * docs/sidecar.md and in test/fixtures/sidecar/schemas/ (a test keeps both
 * equal to this).
 */
import { z } from "zod/v4";
import { hostFrameSchemas, type HostFrameType } from "./host-frames.js";
import { SIDECAR_PROTOCOL_VERSION } from "./protocol-values.js";
import { sidecarFrameSchemas, type SidecarFrameType } from "./sidecar-frames.js";

/** A JSON Schema document (draft 2020-12). */
export type JsonSchemaDocument = Record<string, unknown>;

/** Every frame's JSON Schema, by direction and type. */
export interface SidecarProtocolSchemas {
  /** The protocol version they describe. */
  version: number;
  /** Frames the host sends (stdin of the sidecar). */
  host: Record<HostFrameType, JsonSchemaDocument>;
  /** Frames the sidecar sends (its stdout). */
  sidecar: Record<SidecarFrameType, JsonSchemaDocument>;
}

let cached: SidecarProtocolSchemas | undefined;

/** The JSON Schema of every frame of protocol version 1 (a fresh deep copy each call). */
export function sidecarProtocolSchemas(): SidecarProtocolSchemas {
  cached ??= {
    version: SIDECAR_PROTOCOL_VERSION,
    host: mapValues(hostFrameSchemas, (schema) => toJsonSchema(schema, "input")),
    sidecar: mapValues(sidecarFrameSchemas, (schema) => toJsonSchema(schema, "output")),
  };
  return structuredClone(cached);
}

function toJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchemaDocument {
  return z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonSchemaDocument;
}

function mapValues<K extends string, V, R>(record: Record<K, V>, map: (value: V) => R): Record<K, R> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value as V)])) as Record<K, R>;
}
