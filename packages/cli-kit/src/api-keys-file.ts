import { readFileSync } from "node:fs";
import { CliUsageError } from "./usage-error.js";

/** What a key may do on the relay: act as a listener, or as an SDK client (docs/relay.md "Key roles"). */
export type ApiKeyRole = "listener" | "sdk";

/** One tenant's keys of a file, by role; a `<tenant> <key>` line's key is in both lists. */
export interface ApiKeysFileTenant {
  listener: string[];
  sdk: string[];
}

/**
 * The keys of an API keys file (`--api-keys-file`), the one format of every toolrelay command:
 * one key a line, `<key>` (a tenant of its own), `<tenant> <key>` (keys of one tenant share
 * what the tenant owns; the key has both roles) or `<tenant> listener <key>` /
 * `<tenant> sdk <key>` (the key has that role only); blank lines and lines starting with `#`
 * are skipped, white space around a word is not part of it. A command without tenants or roles
 * (`toolrelay-openai`) takes every key of the file ({@link allApiKeys}).
 */
export interface ApiKeysFile {
  /** Keys of a line of their own: each is a tenant of its own. */
  apiKeys: string[];
  /** Keys by tenant name and role, in file order. */
  tenants: Record<string, ApiKeysFileTenant>;
}

/** Every key of a file, once each, in file order (for a command without tenants: each key is its own principal). */
export function allApiKeys(file: ApiKeysFile): string[] {
  return [...new Set([...file.apiKeys, ...Object.values(file.tenants).flatMap((tenant) => [...tenant.listener, ...tenant.sdk])])];
}

const ROLES: readonly ApiKeyRole[] = ["listener", "sdk"];
const LINE_FORMS = '"<key>", "<tenant> <key>" or "<tenant> listener|sdk <key>"';

/**
 * Reads an API keys file. Throws {@link CliUsageError} when it cannot be read (the path and the
 * system's code: `cannot read --api-keys-file ./keys: ENOENT`) or a line is none of the forms
 * (its number only, never its text, which holds a key).
 */
export function readApiKeysFile(path: string): ApiKeysFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new CliUsageError(`cannot read --api-keys-file ${path}: ${(error as NodeJS.ErrnoException).code ?? "error"}`, { cause: error });
  }
  const apiKeys: string[] = [];
  // A Map, not an object: a tenant may be called `__proto__`.
  const tenants = new Map<string, ApiKeysFileTenant>();
  const add = (tenant: string, roles: readonly ApiKeyRole[], key: string): void => {
    const entry = tenants.get(tenant) ?? { listener: [], sdk: [] };
    for (const role of roles) if (!entry[role].includes(key)) entry[role].push(key);
    tenants.set(tenant, entry);
  };
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const words = line.split(/\s+/);
    if (words.length === 1) apiKeys.push(line);
    else if (words.length === 2) add(words[0] as string, ROLES, words[1] as string);
    else if (words.length === 3 && (ROLES as readonly string[]).includes(words[1] as string))
      add(words[0] as string, [words[1] as ApiKeyRole], words[2] as string);
    else throw new CliUsageError(`${path} line ${index + 1}: expected ${LINE_FORMS}`);
  });
  return { apiKeys, tenants: Object.fromEntries(tenants) };
}
