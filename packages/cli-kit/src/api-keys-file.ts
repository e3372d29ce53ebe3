import { readFileSync } from "node:fs";
import { CliUsageError } from "./usage-error.js";

/**
 * The keys of an API keys file (`--api-keys-file`), the one format of every toolrelay command:
 * one key a line, `<key>` (a tenant of its own) or `<tenant> <key>` (keys of one tenant share
 * what the tenant owns); blank lines and lines starting with `#` are skipped, white space around
 * a word is not part of it.
 */
export interface ApiKeysFile {
  /** Keys of a line of their own: each is a tenant of its own. */
  apiKeys: string[];
  /** Keys by tenant name, in file order. */
  tenants: Record<string, string[]>;
}

/** Every key of a file, in file order (for a command without tenants: each key is its own principal). */
export function allApiKeys(file: ApiKeysFile): string[] {
  return [...file.apiKeys, ...Object.values(file.tenants).flat()];
}

/**
 * Reads an API keys file. Throws {@link CliUsageError} when it cannot be read (the path and the
 * system's code: `cannot read --api-keys-file ./keys: ENOENT`) or a line has more than two words
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
  const tenants = new Map<string, string[]>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const words = line.split(/\s+/);
    if (words.length === 1) apiKeys.push(line);
    else if (words.length === 2) {
      const [tenant, key] = words as [string, string];
      tenants.set(tenant, [...(tenants.get(tenant) ?? []), key]);
    } else throw new CliUsageError(`${path} line ${index + 1}: expected "<key>" or "<tenant> <key>"`);
  });
  return { apiKeys, tenants: Object.fromEntries(tenants) };
}
