/**
 * The shared fixtures of the two halves (test/fixtures/sidecar/): the JSON
 * Schema of every frame type, and example frames of every type with their
 * exact bytes in both encodings. This test writes a file that is missing and
 * fails when a committed one differs from what the code produces now
 * (`UPDATE_SIDECAR_FIXTURES=1` rewrites them: review and commit the diff).
 * The Python tests (clients/python/tests/test_protocol_fixtures.py) read the
 * same files and round-trip them, so neither half can drift silently.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { bodyCodec } from "../../packages/toolrelay/src/sidecar/frame-encoding.js";
import { frameBytes } from "../../packages/toolrelay/src/sidecar/frame-reader.js";
import { hostFrameSchemas, type HostFrameType } from "../../packages/toolrelay/src/sidecar/host-frames.js";
import { sidecarProtocolSchemas } from "../../packages/toolrelay/src/sidecar/index.js";
import { sidecarFrameSchemas, type SidecarFrameType } from "../../packages/toolrelay/src/sidecar/sidecar-frames.js";
import { exampleFrames } from "./support/example-frames.js";

const folder = fileURLToPath(new URL("../fixtures/sidecar/", import.meta.url));
const update = process.env.UPDATE_SIDECAR_FIXTURES === "1";

/** Write `content` at `path` if missing (or when updating); else it must be what is there. */
function fixture(path: string, content: Buffer): void {
  const file = join(folder, path);
  if (update || !existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    return;
  }
  expect(readFileSync(file).equals(content), `${path} differs from what the code produces: UPDATE_SIDECAR_FIXTURES=1 rewrites it`).toBe(
    true,
  );
}

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`);

describe("shared sidecar fixtures", () => {
  it("holds the JSON Schema of every frame type", () => {
    const schemas = sidecarProtocolSchemas();
    for (const [direction, byType] of Object.entries({ host: schemas.host, sidecar: schemas.sidecar })) {
      for (const [type, schema] of Object.entries(byType)) fixture(`schemas/${direction}/${type}.schema.json`, json(schema));
      const files = readdirSync(join(folder, "schemas", direction)).sort();
      expect(files).toEqual(
        Object.keys(byType)
          .map((type) => `${type}.schema.json`)
          .sort(),
      );
    }
  });

  it("holds example frames of every type, valid, with their exact bytes in JSON and MessagePack", () => {
    const examples = exampleFrames();
    const covered = { host: new Set<string>(), sidecar: new Set<string>() };
    const names: string[] = [];
    for (const example of examples) {
      const schema =
        example.direction === "host"
          ? hostFrameSchemas[example.frame.type as HostFrameType]
          : sidecarFrameSchemas[example.frame.type as SidecarFrameType];
      const parsed = schema.safeParse(example.frame);
      expect(parsed.success, `${example.name}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      covered[example.direction].add(example.frame.type);
      const base = `frames/${example.direction}-${example.name}`;
      names.push(`${example.direction}-${example.name}`);
      fixture(`${base}.json`, json(example.frame));
      fixture(`${base}.json.bin`, Buffer.from(frameBytes(bodyCodec("json").encode(example.frame))));
      fixture(`${base}.msgpack.bin`, Buffer.from(frameBytes(bodyCodec("msgpack").encode(example.frame))));
    }
    expect([...covered.host].sort()).toEqual(Object.keys(hostFrameSchemas).sort());
    expect([...covered.sidecar].sort()).toEqual(Object.keys(sidecarFrameSchemas).sort());
    fixture("frames/index.json", json(names));
    // A stream of every example, back to back, as a pipe would carry them.
    for (const encoding of ["json", "msgpack"] as const) {
      fixture(
        `frames/all.${encoding}.bin`,
        Buffer.concat(examples.map((example) => frameBytes(bodyCodec(encoding).encode(example.frame)))),
      );
    }
  });

  it("decodes every fixture's bytes back to its frame", () => {
    for (const example of exampleFrames()) {
      for (const encoding of ["json", "msgpack"] as const) {
        const bytes = readFileSync(join(folder, `frames/${example.direction}-${example.name}.${encoding}.bin`));
        expect(bytes.readUInt32BE(0)).toBe(bytes.length - 4);
        const decoded = bodyCodec(encoding).decode(bytes.subarray(4));
        expect(decoded).toEqual({ ok: true, value: example.frame });
      }
    }
  });
});
