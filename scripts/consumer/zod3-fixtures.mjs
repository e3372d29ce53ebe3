// The zod 3 consumer projects of scripts/consumer-test.mjs (issue 24: zod 3 projects): a project
// on zod 3.25 (whose `import { z } from "zod"` is zod 3; the SDK itself loads the zod 4 that zod
// 3.25 ships as "zod/v4") defines a tool with a zod 3 schema, type-checks it strictly (the
// callback's input type comes from the zod 3 schema) and runs it: the JSON Schema offered,
// validation with defaults, and a real turn in which the scripted runtime calls the tool. One
// TypeScript source, compiled as an ES module (`"type": "module"`) and as CommonJS.

/** @param {{ packageName: string }} options */
export function zod3ConsumerFiles({ packageName }) {
  const main = JSON.stringify(packageName);
  const testing = JSON.stringify(`${packageName}/testing`);
  const source = `import assert from "node:assert/strict";
import { z } from "zod";
import { createSession, defineTool, isToolrelayError } from ${main};
import { startScriptedRuntime } from ${testing};

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({
    city: z.string().min(1).describe("City name"),
    units: z.enum(["celsius", "fahrenheit"]).default("celsius"),
  }),
  execute: ({ city, units }) => {
    // The types come from the zod 3 schema: a string and the enum (the default filled in).
    const unit: "celsius" | "fahrenheit" = units;
    return \`sunny in \${city.toUpperCase()}, 21 degrees \${unit}\`;
  },
});

export async function main(): Promise<void> {
  assert.ok(!("_zod" in z.string()), "the project's zod is zod 3");
  assert.equal(weather.inputKind, "zod");
  assert.deepEqual(weather.jsonSchema, {
    type: "object",
    properties: {
      city: { type: "string", minLength: 1, description: "City name" },
      units: { type: "string", enum: ["celsius", "fahrenheit"], default: "celsius" },
    },
    required: ["city"],
  });
  assert.deepEqual(weather.validateInput({ city: "Oslo" }), { ok: true, value: { city: "Oslo", units: "celsius" } });
  assert.deepEqual(weather.validateInput({ city: "" }), {
    ok: false,
    issues: [{ path: "city", message: "String must contain at least 1 character(s)" }],
  });
  assert.throws(
    () => defineTool({ name: "when", description: "d", inputSchema: z.object({ at: z.date() }), execute: () => "" }),
    (error: unknown) => isToolrelayError(error) && error.code === "INVALID_TOOL_DEFINITION" && /at: z\\.date\\(\\) has no JSON form/.test(error.message),
  );

  const runtime = await startScriptedRuntime({
    script: async (turn) => {
      const offered = turn.tools.find((tool) => tool.name === "get_weather");
      assert.deepEqual(offered?.parameters, weather.jsonSchema);
      const result = await turn.callTool("get_weather", { city: "Oslo" });
      await turn.say(result.toolReturn);
    },
  });
  try {
    const session = await createSession({
      backend: { kind: "local", url: runtime.url },
      agent: { create: { model: "scripted/consumer" } },
      tools: [weather],
    });
    try {
      const result = await session.send("weather in Oslo?").result;
      assert.equal(result.stopReason, "end_turn");
      assert.equal(result.text, "sunny in OSLO, 21 degrees celsius");
    } finally {
      await session.close();
    }
  } finally {
    await runtime.close();
  }
}
`;
  const tsconfig = (module) =>
    `${JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          skipLibCheck: false,
          target: "ES2022",
          lib: ["ES2022"],
          types: ["node"],
          module,
          moduleResolution: module,
          outDir: "out",
        },
        files: ["consumer.ts"],
      },
      null,
      2,
    )}\n`;
  return {
    "zod3-esm": {
      "consumer.ts": `${source}\nawait main();\nconsole.log("zod 3 esm consumer: ok");\n`,
      "tsconfig.json": tsconfig("node16"),
      run: "out/consumer.js",
    },
    "zod3-cjs": {
      "consumer.ts": `${source}\nmain().then(\n  () => console.log("zod 3 cjs consumer: ok"),\n  (error: unknown) => {\n    console.error(error);\n    process.exit(1);\n  },\n);\n`,
      "tsconfig.json": tsconfig("node16"),
      run: "out/consumer.js",
    },
  };
}
