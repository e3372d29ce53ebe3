/**
 * A chat client that goes away mid-stream: it opens a streamed completion for `content` and closes
 * the connection as soon as the first chunk arrives. Returns the `finish_reason` of every chunk it
 * read (`[null]` when only the opening chunk came: the answer never finished).
 */
import type OpenAI from "openai";

export async function leaveMidStream(
  client: OpenAI,
  content: string,
  headers: Record<string, string>,
): Promise<Array<string | null | undefined>> {
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model: "letta-code", messages: [{ role: "user", content }], stream: true },
    { headers, signal: controller.signal },
  );
  const finishes: Array<string | null | undefined> = [];
  for await (const chunk of stream) {
    finishes.push(chunk.choices[0]?.finish_reason);
    controller.abort();
  }
  return finishes;
}
