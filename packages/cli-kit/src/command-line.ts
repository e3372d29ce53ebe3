import { parseArgs } from "node:util";
import { CliUsageError } from "./usage-error.js";

/** One option of a command: how it is parsed, and its line in `--help`. */
export interface CliOption {
  /** `"boolean"`: a flag; `"string"`: takes a value. */
  type: "string" | "boolean";
  /** May be given more than once; its values are a list. Default `false`. */
  multiple?: boolean;
  /** A one-letter alias, e.g. `"h"` for `-h`. Default: none. */
  short?: string;
  /** How `--help` names the value: `<n>`, `<path>`. Default `<value>` (string options only). */
  value?: string;
  /** What it does, for `--help`; a `\n` starts a continuation line. */
  help: string;
}

/** Options shown together in `--help`, under a title (none for the first group). */
export interface CliOptionGroup {
  /** The line above the group, e.g. `Bounds (defaults in docs/relay.md):`. Default: none. */
  title?: string;
  options: Readonly<Record<string, CliOption>>;
}

/** A command: its option table, from which both the parser and `--help` are made. */
export interface CliCommand {
  /** The executable's name, e.g. `toolrelay-relay`: the usage line and every error start with it. */
  name: string;
  /** What follows the name on the usage line, e.g. `[options]`. */
  synopsis: string;
  /** A paragraph under the usage line. Default: none. */
  description?: string;
  groups: readonly CliOptionGroup[];
  /** The package's version (read from its package.json, never a literal), printed by `--version`. */
  version: string;
}

/** The options every command has, after its own. */
const BUILT_IN: CliOptionGroup = {
  options: {
    help: { type: "boolean", short: "h", help: "print this text and exit" },
    version: { type: "boolean", help: "print the version and exit" },
  },
};

/** What a command line asks for. */
export type CommandLine = { kind: "help" } | { kind: "version" } | { kind: "run"; arguments: CliArguments };

/** The parsed options of a command line, read by name; a name the command does not declare is a bug and throws. */
export class CliArguments {
  readonly #values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>;
  readonly #declared: ReadonlySet<string>;

  constructor(values: Readonly<Record<string, string | boolean | (string | boolean)[] | undefined>>, declared: ReadonlySet<string>) {
    this.#values = values;
    this.#declared = declared;
  }

  /** Whether the option was given. */
  has(name: string): boolean {
    return this.#value(name) !== undefined;
  }

  /** A string option's value (the last one given). */
  text(name: string): string | undefined {
    const value = this.#value(name);
    const last = Array.isArray(value) ? value.at(-1) : value;
    return typeof last === "string" ? last : undefined;
  }

  /** A repeatable string option's values, in order (`[]` when not given). */
  list(name: string): string[] {
    const value = this.#value(name);
    return (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((item): item is string => typeof item === "string");
  }

  /** A boolean option: given or not. */
  flag(name: string): boolean {
    return this.#value(name) === true;
  }

  /**
   * A whole number option in `min`–`max` (default 0 to `Number.MAX_SAFE_INTEGER`); anything else
   * is a {@link CliUsageError} naming the option and the range.
   */
  integer(name: string, range: { min?: number; max?: number } = {}): number | undefined {
    const text = this.text(name);
    if (text === undefined) return undefined;
    const min = range.min ?? 0;
    const max = range.max ?? Number.MAX_SAFE_INTEGER;
    const value = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new CliUsageError(
        range.max === undefined && min === 0
          ? `--${name} must be a non-negative integer`
          : `--${name} must be an integer from ${min} to ${max}`,
      );
    }
    return value;
  }

  #value(name: string): string | boolean | (string | boolean)[] | undefined {
    if (!this.#declared.has(name)) throw new Error(`the command has no option --${name}`);
    return this.#values[name];
  }
}

/**
 * Parses `argv` against the command's options (`node:util` `parseArgs`, strict: an unknown option
 * or a positional argument is a {@link CliUsageError} naming it). `-h` / `--help` and `--version`
 * win over everything else that parses.
 */
export function parseCommandLine(command: CliCommand, argv: readonly string[]): CommandLine {
  const table = optionTable(command);
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries(
        Object.entries(table).map(([name, option]) => [
          name,
          { type: option.type, ...(option.multiple ? { multiple: true } : {}), ...(option.short ? { short: option.short } : {}) },
        ]),
      ),
    }));
  } catch (error) {
    throw new CliUsageError((error as Error).message, { cause: error });
  }
  if (values.help === true) return { kind: "help" };
  if (values.version === true) return { kind: "version" };
  return { kind: "run", arguments: new CliArguments(values, new Set(Object.keys(table))) };
}

/** Every option of the command, its own and the built-in ones, by name. */
export function optionTable(command: CliCommand): Record<string, CliOption> {
  const table: Record<string, CliOption> = {};
  for (const group of [...command.groups, BUILT_IN]) {
    for (const [name, option] of Object.entries(group.options)) {
      if (Object.hasOwn(table, name)) throw new Error(`${command.name}: option --${name} is declared twice`);
      table[name] = option;
    }
  }
  return table;
}

/** The widest option label that still has its help beside it; longer labels push their help right. */
const LABEL_COLUMN = 28;

/** The `--help` text: the usage line, the description, then every group of options, one option a line. */
export function usageText(command: CliCommand): string {
  const lines = [`Usage: ${command.name} ${command.synopsis}`, ""];
  if (command.description) lines.push(command.description, "");
  const groups = [...command.groups, BUILT_IN];
  const labels = groups.flatMap((group) => Object.entries(group.options).map(([name, option]) => optionLabel(name, option)));
  const column = Math.min(LABEL_COLUMN, Math.max(...labels.map((label) => label.length)));
  for (const group of groups) {
    if (group.title) lines.push(group.title);
    for (const [name, option] of Object.entries(group.options)) {
      const label = optionLabel(name, option);
      const [first = "", ...rest] = option.help.split("\n");
      lines.push(`  ${label.padEnd(column)}  ${first}`.trimEnd());
      for (const more of rest) lines.push(`  ${" ".repeat(column)}  ${more}`);
    }
    lines.push("");
  }
  return lines.join("\n");
}

function optionLabel(name: string, option: CliOption): string {
  const flag = option.short ? `-${option.short}, --${name}` : `--${name}`;
  return option.type === "string" ? `${flag} ${option.value ?? "<value>"}` : flag;
}
