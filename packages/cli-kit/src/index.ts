/**
 * `@toolrelay/cli-kit`: what toolrelay's three executables (`toolrelay-relay`,
 * `toolrelay-sidecar`, `toolrelay-openai`) share — one option table per command from which the
 * parser and `--help` are made, `-h` / `--help` and `--version`, errors printed with their causes,
 * the exit codes, and the one API keys file format. Private: each package bundles it into its bins.
 */
export { ExitCode } from "./exit-codes.js";
export { CliUsageError } from "./usage-error.js";
export { describeError } from "./describe-error.js";
export { allApiKeys, readApiKeysFile, type ApiKeysFile } from "./api-keys-file.js";
export {
  CliArguments,
  optionTable,
  parseCommandLine,
  usageText,
  type CliCommand,
  type CliOption,
  type CliOptionGroup,
  type CommandLine,
} from "./command-line.js";
export { processIo, runCommand, type CliIo, type CommandOutcome } from "./run-command.js";
