/**
 * Benchmark 7: what validating one tool input costs, per call, for each kind of `inputSchema`
 * — the figure behind the choice of ajv for plain JSON Schemas (docs/tools.md). All in this
 * process, on the same nested input (an order: a customer object with an enum, 1–3 items with a
 * pattern and bounds), valid and invalid (4 issues, every one reported). The validators:
 *
 * - zod 4 (`z.safeParse`, today's path for zod tools): the baseline;
 * - ajv 8 (draft 2020-12, compiled once, allErrors): what a JSON Schema tool runs;
 * - @cfworker/json-schema 4 (draft 2020-12, interpreted, every error): the alternative weighed;
 * - valibot 1 through Standard Schema (`~standard.validate`): a Standard Schema tool.
 *
 * Each figure is the median over interleaved rounds of ns per call, through the tool's own
 * `validateInput` where the SDK has one. The compile cost (once per tool, at `defineTool`) is
 * measured the same way. The SDK is imported from packages/toolrelay/src/ (through tsx), not the bundle: this
 * suite measures validators, not the SDK's build.
 */
import { Validator } from "@cfworker/json-schema";
import { toStandardJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { z } from "zod";
import { compileJsonSchemaValidator, defineTool } from "../../packages/toolrelay/src/tools/index.js";
import { orderJsonSchema } from "../../test/fixtures/tool-schemas.js";
import type { Log, ResultRow, SuiteResult } from "../harness/report-types.js";
import { ratio, rotate, summarize } from "../harness/stats.js";

export interface SchemaValidationConfig {
  rounds: number;
  callsPerRound: number;
  compilesPerRound: number;
}

export const fullSchemaValidationConfig: SchemaValidationConfig = { rounds: 15, callsPerRound: 20_000, compilesPerRound: 200 };
export const quickSchemaValidationConfig: SchemaValidationConfig = { rounds: 2, callsPerRound: 200, compilesPerRound: 5 };

const orderZod = z.object({
  customer: z.strictObject({ name: z.string().min(1).max(80), tier: z.enum(["free", "pro", "enterprise"]).default("free") }),
  items: z
    .array(z.object({ sku: z.string().regex(/^[A-Z]{3}-\d{3}$/), quantity: z.number().int().min(1).max(10).default(1) }))
    .min(1)
    .max(3),
  "gift note": z.string().max(20).optional(),
});

const orderValibot = v.object({
  customer: v.strictObject({
    name: v.pipe(v.string(), v.minLength(1), v.maxLength(80)),
    tier: v.optional(v.picklist(["free", "pro", "enterprise"]), "free"),
  }),
  items: v.pipe(
    v.array(
      v.object({
        sku: v.pipe(v.string(), v.regex(/^[A-Z]{3}-\d{3}$/)),
        quantity: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10)), 1),
      }),
    ),
    v.minLength(1),
    v.maxLength(3),
  ),
  "gift note": v.optional(v.pipe(v.string(), v.maxLength(20))),
});

const validInput = {
  customer: { name: "Ada Lovelace", tier: "pro" },
  items: [
    { sku: "ABC-123", quantity: 2 },
    { sku: "XYZ-999", quantity: 1 },
  ],
  "gift note": "ring twice",
};
const invalidInput = { customer: { tier: "gold", nickname: "x" }, items: [{ sku: "abc", quantity: 0 }] };

type Check = (input: unknown) => unknown;

function validators(): Record<string, Check> {
  const execute = () => "";
  const zodTool = defineTool({ name: "z", description: "d", inputSchema: orderZod, execute });
  const ajvTool = defineTool({ name: "a", description: "d", inputSchema: orderJsonSchema, execute });
  const valibotTool = defineTool({ name: "v", description: "d", inputSchema: toStandardJsonSchema(orderValibot), execute });
  const cfworker = new Validator(orderJsonSchema as never, "2020-12", false);
  return {
    zod: (input) => zodTool.validateInput(input),
    ajv: (input) => ajvTool.validateInput(input),
    "@cfworker/json-schema": (input) => cfworker.validate(input),
    "valibot (Standard Schema)": (input) => valibotTool.validateInput(input),
  };
}

/** ns per call of `check(input)`, one sample per round, rounds interleaved across the validators. */
function perCall(checks: Record<string, Check>, input: unknown, config: SchemaValidationConfig): Record<string, number> {
  const names = Object.keys(checks);
  const samples: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  let sink = 0;
  for (const name of names) for (let index = 0; index < 1_000; index++) sink += checks[name]!(input) ? 1 : 0;
  for (let round = 0; round < config.rounds; round++) {
    for (const name of rotate(names, round)) {
      const check = checks[name]!;
      const started = process.hrtime.bigint();
      for (let index = 0; index < config.callsPerRound; index++) sink += check(input) ? 1 : 0;
      samples[name]!.push(Number(process.hrtime.bigint() - started) / config.callsPerRound);
    }
  }
  if (sink < 0) throw new Error("unreachable");
  return Object.fromEntries(names.map((name) => [name, summarize(samples[name]!).p50]));
}

/** µs per compile of the order schema. */
function compileCost(config: SchemaValidationConfig): Record<string, number> {
  const compilers: Record<string, () => unknown> = {
    ajv: () => compileJsonSchemaValidator(structuredClone(orderJsonSchema)),
    "@cfworker/json-schema": () => new Validator(structuredClone(orderJsonSchema) as never, "2020-12", false),
  };
  const samples: Record<string, number[]> = { ajv: [], "@cfworker/json-schema": [] };
  for (let round = 0; round < config.rounds; round++) {
    for (const name of rotate(Object.keys(compilers), round)) {
      const started = process.hrtime.bigint();
      for (let index = 0; index < config.compilesPerRound; index++) compilers[name]!();
      samples[name]!.push(Number(process.hrtime.bigint() - started) / config.compilesPerRound / 1_000);
    }
  }
  return { ajv: summarize(samples.ajv!).p50, "@cfworker/json-schema": summarize(samples["@cfworker/json-schema"]!).p50 };
}

const nanos = (value: number) => (value >= 10_000 ? `${(value / 1_000).toFixed(1)} µs` : `${value.toFixed(0)} ns`);

export async function runSchemaValidation(config: SchemaValidationConfig, log: Log): Promise<SuiteResult> {
  const started = performance.now();
  const checks = validators();
  const rows: ResultRow[] = [];
  const details: Record<string, unknown> = {};
  for (const [label, input] of [
    ["valid input", validInput],
    ["invalid input (4 issues)", invalidInput],
  ] as const) {
    log(`schema-validation: ${label}`);
    const figures = perCall(checks, input, config);
    details[label] = figures;
    for (const name of Object.keys(checks).filter((name) => name !== "zod")) {
      rows.push({
        section: "8. Schema validation",
        measure: `${label}, per call`,
        baselineName: "zod 4",
        baselineValue: nanos(figures.zod!),
        candidateName: name,
        candidateValue: nanos(figures[name]!),
        ratio: ratio(figures[name]!, figures.zod!),
      });
    }
  }
  log("schema-validation: compile");
  const compile = compileCost(config);
  details.compileMicros = compile;
  rows.push({
    section: "8. Schema validation",
    measure: "compile one schema (once per tool)",
    baselineName: "ajv",
    baselineValue: `${compile.ajv!.toFixed(0)} µs`,
    candidateName: "@cfworker/json-schema",
    candidateValue: `${compile["@cfworker/json-schema"]!.toFixed(0)} µs`,
    ratio: ratio(compile["@cfworker/json-schema"]!, compile.ajv!),
  });
  return {
    name: "schema-validation",
    rows,
    notes: [
      `Schema validation: ${config.rounds} interleaved rounds of ${config.callsPerRound} calls per validator on one nested order input (bench/suites/schema-validation.ts); the median round's ns per call. zod and valibot run through the tool's validateInput, ajv through a JSON Schema tool's validateInput (compiled once at defineTool), @cfworker/json-schema through its Validator (draft 2020-12, all errors). Compile: ${config.compilesPerRound} compiles per round.`,
    ],
    seconds: (performance.now() - started) / 1000,
    details,
  };
}
