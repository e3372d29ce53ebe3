/**
 * The names of the runtime's own tools. A client tool with one of these names silently replaces
 * the runtime's tool for the model (the runtime leaves out every built-in tool whose name an
 * external tool takes, docs/protocol.md#tool-registration), so `defineTool` refuses such a name
 * (`RESERVED_TOOL_NAME`) unless the tool says `overridesRuntimeTool: true`.
 *
 * The list is every tool of every toolset Letta Code 0.32.18 offers a model (its
 * `TOOLSET_CATALOG`: `default` for most models, `codex` for OpenAI models, `letta`), by the name
 * the model sees (`Agent`) and by the runtime's own name for it (`Task`: an external tool of that
 * name takes the `Agent` tool away from the model), and the artifact tools it adds behind an
 * experiment.
 * integration/runtime-tool-names-real-peer.test.ts holds it to what the real runtime offers.
 */

/** The runtime's own tool names, in the toolsets' order (the model-facing name after the runtime's). */
const NAMES = [
  // default (most models; what the local backend offers)
  "AskUserQuestion",
  "Bash",
  "Monitor",
  "EnterWorktree",
  "ExitWorktree",
  "SetWorkingDirectory",
  "Edit",
  "TaskStop",
  "memory",
  "Read",
  "Skill",
  "Workflow",
  "Task",
  "Agent",
  "SendAgentMessage",
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskUpdate",
  "Write",
  // codex (OpenAI models) and letta
  "memory_apply_patch",
  "exec_command",
  "write_stdin",
  "ViewImage",
  "ApplyPatch",
  "UpdatePlan",
  // the artifacts experiment
  "read_artifact_file",
  "write_artifact_file",
] as const;

/**
 * Every name of a tool the runtime offers the model itself (Letta Code 0.32.18): a client tool
 * with one of them replaces the runtime's tool, so `defineTool` asks for `overridesRuntimeTool: true`.
 */
export const RUNTIME_TOOL_NAMES: ReadonlySet<string> = new Set<string>(NAMES);

/** `true` when `name` is one of {@link RUNTIME_TOOL_NAMES} (exact, case-sensitive, as the runtime compares). */
export function isRuntimeToolName(name: string): boolean {
  return RUNTIME_TOOL_NAMES.has(name);
}
