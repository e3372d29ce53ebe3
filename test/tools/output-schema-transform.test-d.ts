/**
 * An `outputSchema` with defaults or transforms: `execute` returns what the schema takes (its
 * input type: a default may be left out, a transformed field has its raw type), and the app reads
 * what the schema gives (its output type) — as at run time, where the returned value is parsed
 * (test/tools/tool-output-schema.test.ts).
 */
import * as v from "valibot";
import { describe, expectTypeOf, test } from "vitest";
import { z } from "zod";
import { defineTool, type ClientTool } from "../../packages/toolrelay/src/index.js";

describe("an outputSchema with defaults and transforms", () => {
  test("zod: execute may leave out a default and return a transformed field raw; the tool's output type is the parsed one", () => {
    const order = defineTool({
      name: "order",
      description: "d",
      inputSchema: z.object({ id: z.string() }),
      outputSchema: z.object({ id: z.string(), currency: z.string().default("EUR"), placedAt: z.string().transform((at) => new Date(at)) }),
      execute: ({ id }) => ({ id, placedAt: "2026-12-01T10:00:00Z" }),
      toModelOutput: (output) => `${output.id} placed ${output.placedAt.toISOString()} in ${output.currency}`,
    });
    expectTypeOf(order).toExtend<ClientTool<z.ZodObject<{ id: z.ZodString }>, { id: string; currency: string; placedAt: Date }, "order">>();
    // @ts-expect-error execute returns what the schema takes (a string here), not what it gives
    defineTool({
      name: "bad",
      description: "d",
      inputSchema: z.object({}),
      outputSchema: z.object({ placedAt: z.string().transform((at) => new Date(at)) }),
      execute: () => ({ placedAt: new Date() }),
    });
  });

  test("a Standard Schema (valibot): the same, with its input and output types", () => {
    const noInput = z.object({});
    const tagged = defineTool({
      name: "tagged",
      description: "d",
      inputSchema: noInput,
      outputSchema: v.object({ tags: v.optional(v.array(v.string()), []) }),
      execute: () => ({}),
    });
    expectTypeOf(tagged).toExtend<ClientTool<typeof noInput, { tags: string[] }, "tagged">>();
  });
});
