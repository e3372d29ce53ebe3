/**
 * docs/sidecar.md is checked against the code: its JSON Schema section is
 * exactly the generated schemas (`UPDATE_SIDECAR_FIXTURES=1` rewrites it), and
 * its tables name every frame type, fault and error code.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SIDECAR_ERROR_CODES, TURN_FAULTS, sidecarProtocolSchemas } from "../../packages/toolrelay/src/sidecar/index.js";

const docsUrl = new URL("../../docs/sidecar.md", import.meta.url);
const START = "<!-- sidecar-schemas:start -->";
const END = "<!-- sidecar-schemas:end -->";

function schemaSection(): string {
  const schemas = sidecarProtocolSchemas();
  const parts: string[] = [];
  for (const [direction, label] of [
    ["host", "host → sidecar"],
    ["sidecar", "sidecar → host"],
  ] as const) {
    for (const [type, schema] of Object.entries(schemas[direction])) {
      parts.push(`### \`${type}\` (${label})\n\n\`\`\`json\n${JSON.stringify(schema, null, 2)}\n\`\`\``);
    }
  }
  return `${START}\n\n${parts.join("\n\n")}\n\n${END}`;
}

describe("docs/sidecar.md", () => {
  it("holds the generated JSON Schema of every frame type", () => {
    const docs = readFileSync(docsUrl, "utf8");
    const start = docs.indexOf(START);
    const end = docs.indexOf(END);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const current = docs.slice(start, end + END.length);
    if (process.env.UPDATE_SIDECAR_FIXTURES === "1") {
      writeFileSync(docsUrl, docs.replace(current, schemaSection()));
      return;
    }
    expect(current, "docs/sidecar.md's schemas differ from the code: UPDATE_SIDECAR_FIXTURES=1 rewrites them").toBe(schemaSection());
  });

  it("names every frame type, fault and error code in its tables", () => {
    const docs = readFileSync(docsUrl, "utf8");
    const schemas = sidecarProtocolSchemas();
    for (const type of [...Object.keys(schemas.host), ...Object.keys(schemas.sidecar)])
      expect(docs).toMatch(new RegExp(`^\\| \`${type}\` \\|`, "m"));
    for (const fault of TURN_FAULTS) expect(docs).toMatch(new RegExp(`^\\| \`${fault}\` \\|`, "m"));
    for (const code of SIDECAR_ERROR_CODES) expect(docs).toContain(`\`${code}\``);
  });
});
