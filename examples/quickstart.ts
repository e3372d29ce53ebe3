/**
 * The toolrelay quick start: a client tool that runs in THIS process, called by
 * an agent turn. It runs against the scripted runtime embedded in
 * `toolrelay/testing` (a loopback server that speaks the Letta Code app-server
 * protocol with a script in place of the model), so it needs no account and no
 * model. Swap the backend for `{ kind: "local", url }` to use a real
 * `letta server --listen` (see examples/local-letta.ts).
 *
 *   npm run demo                         # or: npm run demo -- Lisbon
 *   DEBUG='toolrelay*' npm run demo      # the session's life on stderr (no prompts, inputs or results)
 */
import { z } from "zod";
import { createSession, defineTool } from "toolrelay";
import { startScriptedRuntime } from "toolrelay/testing";

const weather = defineTool({
  name: "get_weather",
  description: "Current weather for a city",
  inputSchema: z.object({ city: z.string().describe("City name, e.g. Paris") }),
  annotations: { readOnlyHint: true },
  async execute({ city }, { toolCallId }) {
    console.log(`  [tool] get_weather ran in process ${process.pid} for ${JSON.stringify(city)} (call ${toolCallId})`);
    return `sunny and 21 °C in ${city}`;
  },
});

const city = process.argv[2] ?? "Paris";

// The "model": says something, calls get_weather, then answers with the result.
const runtime = await startScriptedRuntime({
  script: async (turn) => {
    await turn.say("Let me check the weather. ");
    const result = await turn.callTool("get_weather", { city });
    const text = result.content.map((part) => ("text" in part ? part.text : "")).join("");
    await turn.say(`It is ${text}.`);
  },
});

try {
  await using session = await createSession({
    backend: { kind: "local", url: runtime.url },
    agent: { create: { model: "scripted/demo", name: "quickstart" } },
    tools: [weather],
  });
  session.on("tool-call-end", (event) => console.log(`  [event] ${event.toolName} -> ${event.outcome} in ${event.durationMs} ms`));

  console.log(`session ${session.agentId} / ${session.conversationId}`);
  const question = `What is the weather in ${city}?`;
  console.log(`> ${question}`);
  for await (const event of session.send(question)) {
    if (event.type === "assistant") console.log(`  [assistant] ${event.text}`);
    else if (event.type === "tool-call") console.log(`  [tool-call] ${event.toolName} ${JSON.stringify(event.input)} (${event.owner})`);
    else if (event.type === "tool-result") console.log(`  [tool-result] ${event.text}`);
    else if (event.type === "stop") console.log(`  [stop] ${event.stopReason}`);
  }
} finally {
  await runtime.close();
}
