/**
 * Tool names as older transcripts wrote them. Providers and earlier bridges prefixed the names the
 * model saw: `functions.read_file` (OpenAI's own rendering of a function tool), and
 * `mcp__client__read_file` (a bridge that offered the client's tools through an MCP server named
 * `client`). A name in a request — a declared tool, an assistant message's `tool_calls`, a tool
 * message's `name`, `tool_choice` — is normalised with {@link normalizeToolName} before it is
 * compared, registered or shown to the agent, so that such a transcript still resolves.
 */

/** `functions.` / `function.` / `tools.` before the name (OpenAI and harmony-style renderings). */
const NAMESPACE_PREFIX = /^(?:functions|function|tools)\.(?=[^.])/;
/** `mcp__<server>__<tool>`: the MCP naming convention of Claude Code and the bridges built like it. */
const MCP_PREFIX = /^mcp__[A-Za-z0-9_-]+?__(?=[^_])/;

/**
 * The tool's own name: `functions.read_file` → `read_file`, `mcp__client__read_file` →
 * `read_file`, `mcp__client__functions.read_file` → `read_file`. A name without a known prefix
 * is returned unchanged (surrounding white space removed).
 */
export function normalizeToolName(name: string): string {
  let current = name.trim();
  for (;;) {
    const next = current.replace(MCP_PREFIX, "").replace(NAMESPACE_PREFIX, "");
    if (next === current || next === "") return current;
    current = next;
  }
}
