/**
 * The runtime's permission modes (`runtime_start`'s `mode`, docs/protocol.md), spelled once: the
 * wire schema, the session's `mode` option, the sidecar's `open_session` and the scripted runtime
 * take them from here. The public `PermissionMode` types are these names (a test holds them equal).
 */
export const PERMISSION_MODES = ["standard", "acceptEdits", "unrestricted", "strict"] as const;

/** One of {@link PERMISSION_MODES}. */
export type PermissionModeName = (typeof PERMISSION_MODES)[number];

/** `"standard", "acceptEdits", "unrestricted" or "strict"`: the modes as an error message lists them. */
export function listPermissionModes(): string {
  const quoted = PERMISSION_MODES.map((mode) => `"${mode}"`);
  return `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}`;
}

/**
 * The mode a session asks for when it names none: `strict`, where the runtime asks before every
 * call of its own tools (Bash, Read, Write, ...), so the session's `canUseTool` sees each one and,
 * without it, none runs. The runtime's own default, `unrestricted`, runs them unasked; `standard`
 * runs the ones it classifies as read-only unasked. docs/approvals.md.
 */
export const DEFAULT_PERMISSION_MODE: PermissionModeName = "strict";
