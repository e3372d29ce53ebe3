/**
 * The `POST /v1/chat/completions` body the bridge accepts, checked with zod and normalised into a
 * {@link ChatRequest}: one message type per role, text flattened, tool names normalised
 * (tool-names.ts). Fields the bridge has no use for (`temperature`, `max_tokens`, ...) are
 * accepted and ignored: the agent's own model settings decide. What it cannot honour is refused
 * with a 400 naming the field (`n` > 1, the legacy `functions`, an unknown role or content part), and
 * so is what the OpenAI API itself refuses as a conversation that cannot have happened: a tool
 * message that answers no call of the assistant message before it.
 */
import { z } from "zod/v4";
import { formatPath } from "../wire/format-issues.js";
import { ChatApiError } from "./chat-api-error.js";
import { normalizeToolName } from "./tool-names.js";

/** A piece of a user message. */
export type UserPart = { type: "text"; text: string } | { type: "image"; url: string };

/** One message of a request, by role (`developer` is folded into `system`). */
export type ChatMessage =
  | { role: "system"; text: string }
  | { role: "user"; parts: UserPart[] }
  | { role: "assistant"; text: string; toolCalls: AssistantToolCall[] }
  | { role: "tool"; toolCallId: string; text: string; name: string | undefined };

/** A tool call of an assistant message in the history; `name` normalised. */
export interface AssistantToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A tool the client declared; `name` normalised, `declaredName` as the client wrote it. */
export interface ChatTool {
  name: string;
  declaredName: string;
  description: string | undefined;
  parameters: Record<string, unknown>;
}

export type ChatToolChoice = "auto" | "none" | "required" | { name: string };

export interface ChatRequest {
  model: string;
  stream: boolean;
  messages: ChatMessage[];
  tools: ChatTool[];
  toolChoice: ChatToolChoice;
  user: string | undefined;
  metadata: Record<string, string> | undefined;
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);
const text = z.string({ error: "must be a string" });
const textPart = z.object({ type: z.literal("text"), text });
const imagePart = z.object({
  type: z.literal("image_url"),
  image_url: z.object({ url: text, detail: z.string().optional() }, { error: "must be an object with a url" }),
});
const contentOf = <T extends z.ZodType>(part: T) =>
  // The array first: when both branches fail, the closest one on a tie is the array's (its part is named).
  z.union([z.array(part, { error: "must be a string or an array of content parts" }), text]);

const toolCall = z.object({
  id: z.string({ error: "must be a string" }).min(1, "must not be empty"),
  type: z.literal("function").optional(),
  function: z.object({ name: text.min(1, "must not be empty"), arguments: z.string({ error: "must be a string" }).default("") }),
});

const message = z.discriminatedUnion(
  "role",
  [
    z.object({ role: z.enum(["system", "developer"]), content: contentOf(textPart) }),
    z.object({
      role: z.literal("user"),
      content: contentOf(z.discriminatedUnion("type", [textPart, imagePart], { error: 'must be a "text" or "image_url" part' })),
    }),
    z.object({
      role: z.literal("assistant"),
      content: z.union([contentOf(z.union([textPart, z.object({ type: z.literal("refusal"), refusal: text })])), z.null()]).optional(),
      tool_calls: z.array(toolCall, { error: "must be an array" }).optional(),
    }),
    z.object({
      role: z.literal("tool"),
      content: contentOf(textPart),
      tool_call_id: text.min(1, "must not be empty"),
      name: text.optional(),
    }),
  ],
  { error: 'must have a role of "system", "developer", "user", "assistant" or "tool"' },
);

const tool = z.object({
  type: z.literal("function", { error: 'must be "function"' }),
  function: z.object({
    name: text.min(1, "must not be empty"),
    description: text.optional(),
    parameters: z.record(z.string(), z.unknown(), { error: "must be a JSON Schema object" }).optional(),
    strict: z.boolean().nullable().optional(),
  }),
});

const requestSchema = z.object({
  model: text.min(1, "must not be empty"),
  messages: z.array(message, { error: "must be an array of messages" }).min(1, "must hold at least one message"),
  stream: z.boolean({ error: "must be a boolean" }).nullable().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).nullable().optional(),
  tools: z.array(tool, { error: "must be an array" }).nullable().optional(),
  tool_choice: z
    .union([z.enum(["auto", "none", "required"]), z.object({ type: z.literal("function"), function: z.object({ name: text }) })], {
      error: 'must be "auto", "none", "required" or { type: "function", function: { name } }',
    })
    .nullable()
    .optional(),
  user: text.max(256, "must be at most 256 characters").optional(),
  metadata: z
    .record(z.string(), z.string({ error: "must be a string" }), { error: "must be an object of strings" })
    .nullable()
    .optional(),
  n: z.number().nullable().optional(),
});

/** Check a parsed JSON body and normalise it. Throws {@link ChatApiError} (400) naming the field. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw ChatApiError.invalid("invalid_body", "the request body must be a JSON object");
  }
  for (const legacy of ["functions", "function_call"]) {
    if (legacy in body)
      throw ChatApiError.invalid("unsupported_parameter", `"${legacy}" is not supported: declare tools with "tools"`, legacy);
  }
  const messages: unknown = (body as { messages?: unknown }).messages;
  if (Array.isArray(messages)) {
    const index = messages.findIndex((message) => !ROLES.has((message as { role?: unknown } | null)?.role as string));
    if (index >= 0)
      throw ChatApiError.invalid(
        "invalid_request",
        `invalid request: messages[${index}]: must have a role of "system", "developer", "user", "assistant" or "tool"`,
        `messages.${index}.role`,
      );
  }
  const parsed = requestSchema.safeParse(body);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw ChatApiError.invalid("invalid_request", `invalid request: ${describe(parsed.error.issues)}`, first?.path.join("."));
  }
  const request = parsed.data;
  if (request.n !== undefined && request.n !== null && request.n !== 1) {
    throw ChatApiError.invalid("unsupported_parameter", '"n" must be 1: one agent answers one request', "n");
  }
  const tools = (request.tools ?? []).map(toChatTool);
  const seen = new Map<string, string>();
  for (const declared of tools) {
    const earlier = seen.get(declared.name);
    if (earlier !== undefined) {
      throw ChatApiError.invalid(
        "duplicate_tool",
        `tools "${earlier}" and "${declared.declaredName}" both name the tool "${declared.name}"`,
        "tools",
      );
    }
    seen.set(declared.name, declared.declaredName);
  }
  const chatMessages = request.messages.map(toChatMessage);
  checkToolMessages(chatMessages);
  const choice = request.tool_choice;
  return {
    model: request.model,
    stream: request.stream === true,
    messages: chatMessages,
    tools,
    toolChoice:
      choice === undefined || choice === null
        ? "auto"
        : typeof choice === "string"
          ? choice
          : { name: normalizeToolName(choice.function.name) },
    user: request.user,
    metadata: request.metadata ?? undefined,
  };
}

/** Ids quoted in an error message are cut at this many characters. */
const QUOTED_ID_CHARS = 64;

/**
 * Every tool message answers a call of the last assistant message before it, as the OpenAI API
 * requires (it answers such a request 400). A result for a call that was never made must not reach
 * a thread: it would stop the turn that waits for the real result and be told to the agent as the
 * result of an earlier call. Throws a 400 `unknown_tool_call` naming the message.
 */
function checkToolMessages(messages: readonly ChatMessage[]): void {
  let lastAssistant: { index: number; ids: string[] } | undefined;
  messages.forEach((message, index) => {
    if (message.role === "assistant") lastAssistant = { index, ids: message.toolCalls.map((call) => call.id) };
    if (message.role !== "tool" || lastAssistant?.ids.includes(message.toolCallId)) return;
    const quoted = quote(message.toolCallId);
    const why =
      lastAssistant === undefined || lastAssistant.ids.length === 0
        ? "there is no assistant message with tool_calls before it"
        : `it is not a call of the assistant message before it (messages[${lastAssistant.index}] has ${lastAssistant.ids.map(quote).join(", ")})`;
    throw ChatApiError.invalid(
      "unknown_tool_call",
      `messages[${index}]: the tool message answers the call ${quoted}, but ${why}; a tool message answers one of the tool_calls of the assistant message before it`,
      `messages.${index}.tool_call_id`,
    );
  });
}

function quote(id: string): string {
  return JSON.stringify(id.length > QUOTED_ID_CHARS ? `${id.slice(0, QUOTED_ID_CHARS)}…` : id);
}

function toChatTool(declared: z.infer<typeof tool>): ChatTool {
  return {
    name: normalizeToolName(declared.function.name),
    declaredName: declared.function.name,
    description: declared.function.description,
    parameters: declared.function.parameters ?? { type: "object", properties: {} },
  };
}

function toChatMessage(input: z.infer<typeof message>): ChatMessage {
  switch (input.role) {
    case "system":
    case "developer":
      return { role: "system", text: flatten(input.content) };
    case "user":
      return {
        role: "user",
        parts:
          typeof input.content === "string"
            ? [{ type: "text", text: input.content }]
            : input.content.map((part) => (part.type === "text" ? part : { type: "image", url: part.image_url.url })),
      };
    case "assistant":
      return {
        role: "assistant",
        text: input.content === undefined || input.content === null ? "" : flatten(input.content),
        toolCalls: (input.tool_calls ?? []).map((call) => ({
          id: call.id,
          name: normalizeToolName(call.function.name),
          arguments: call.function.arguments,
        })),
      };
    case "tool":
      return {
        role: "tool",
        toolCallId: input.tool_call_id,
        text: flatten(input.content),
        name: input.name === undefined ? undefined : normalizeToolName(input.name),
      };
  }
}

/**
 * zod's issues in one line: a union whose branches all failed is described by its closest branch
 * (the fewest issues; the first on a tie), down to the innermost part; a union that no branch
 * even began to match says what it accepts (its own message).
 */
function describe(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[] = []): string {
  const first = issues[0];
  if (first === undefined) return "invalid";
  const path = [...prefix, ...first.path];
  if (first.code === "invalid_union") {
    if (first.errors.length === 0) return `${formatPath(path)}: ${first.message}`;
    let closest = first.errors[0]!;
    for (const branch of first.errors) if (branch.length < closest.length) closest = branch;
    return describe(closest, path);
  }
  return `${formatPath(path)}: ${first.message}${issues.length > 1 ? ` (and ${issues.length - 1} more)` : ""}`;
}

function flatten(content: string | ReadonlyArray<{ type: string; text?: string | undefined; refusal?: string | undefined }>): string {
  if (typeof content === "string") return content;
  return content.map((part) => part.text ?? part.refusal ?? "").join("");
}
