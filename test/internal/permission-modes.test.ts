/** The runtime's permission modes are spelled once (internal/permission-modes.ts); every user takes them from there. */
import { describe, expect, it } from "vitest";
import { listPermissionModes, PERMISSION_MODES, type PermissionModeName } from "../../packages/toolrelay/src/internal/permission-modes.js";
import type { PermissionMode } from "../../packages/toolrelay/src/index.js";
import { validateSessionOptions } from "../../packages/toolrelay/src/session/validate-session-options.js";
import type { ScriptedPermissionMode } from "../../packages/toolrelay/src/testing/index.js";
import { permissionModeSchema } from "../../packages/toolrelay/src/wire/index.js";

/** `true` only when A and B are the same union (checked by the compiler in npm test's typecheck). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sessionModes: Same<PermissionMode, PermissionModeName> = true;
const scriptedModes: Same<ScriptedPermissionMode, PermissionModeName> = true;

describe("PERMISSION_MODES", () => {
  it("are the public types' names (compile time) and the wire schema's", () => {
    expect([sessionModes, scriptedModes]).toEqual([true, true]);
    expect(permissionModeSchema.options).toEqual([...PERMISSION_MODES]);
  });

  it("are what the session option accepts, and its error lists them", () => {
    const base = { backend: { kind: "local", url: "ws://127.0.0.1:1/ws" }, agent: { id: "agent-1" } } as const;
    for (const mode of PERMISSION_MODES) expect(() => validateSessionOptions({ ...base, mode })).not.toThrow();
    expect(() => validateSessionOptions({ ...base, mode: "yolo" as PermissionMode })).toThrow(
      'mode: must be "standard", "acceptEdits", "unrestricted" or "strict"',
    );
    expect(listPermissionModes()).toBe('"standard", "acceptEdits", "unrestricted" or "strict"');
  });
});
