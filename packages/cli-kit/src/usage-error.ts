/**
 * A bad command line: an unknown option, a value the command cannot use, an API keys file it
 * cannot read. The command prints the message and its usage and exits with 2
 * (`ExitCode.usage`). The message never quotes a secret.
 */
export class CliUsageError extends Error {
  override readonly name = "CliUsageError";
}
