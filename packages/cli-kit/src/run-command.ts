import { type CliArguments, type CliCommand, parseCommandLine, usageText } from "./command-line.js";
import { describeError } from "./describe-error.js";
import { ExitCode } from "./exit-codes.js";
import { CliUsageError } from "./usage-error.js";

/** Where a command writes: text as it is (the kit adds no newline but the one ending each message). */
export interface CliIo {
  /** What the user asked for: `--help`, `--version`, the listening address. */
  stdout(text: string): void;
  /** Errors and logs. */
  stderr(text: string): void;
}

/** The process's own streams. */
export const processIo: CliIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** How a command run ended: its exit code, and what `start` returned when it ran. */
export type CommandOutcome<T> = { exitCode: ExitCode; started?: T };

/**
 * Runs a command line: `-h` / `--help` prints the usage on stdout, `--version` the version (both
 * exit 0); otherwise `start` gets the parsed arguments. A {@link CliUsageError} (from parsing or
 * from `start`) prints `<name>: <message>`, a blank line and the usage on stderr: exit 2. Any other
 * error prints `<name>: <error and its causes>` ({@link describeError}) on stderr: exit 1.
 */
export async function runCommand<T>(
  command: CliCommand,
  argv: readonly string[],
  start: (args: CliArguments) => T | Promise<T>,
  io: CliIo = processIo,
): Promise<CommandOutcome<T>> {
  try {
    const line = parseCommandLine(command, argv);
    if (line.kind === "help") {
      io.stdout(usageText(command));
      return { exitCode: ExitCode.ok };
    }
    if (line.kind === "version") {
      io.stdout(`${command.version}\n`);
      return { exitCode: ExitCode.ok };
    }
    return { exitCode: ExitCode.ok, started: await start(line.arguments) };
  } catch (error) {
    if (error instanceof CliUsageError) {
      io.stderr(`${command.name}: ${error.message}\n\n${usageText(command)}`);
      return { exitCode: ExitCode.usage };
    }
    io.stderr(`${command.name}: ${describeError(error)}\n`);
    return { exitCode: ExitCode.failure };
  }
}
