/**
 * The exit codes of toolrelay's executables, the same for all three: 0 when the command did what
 * it was asked (`--help`, `--version`, a server stopped by SIGINT / SIGTERM), 1 when it could not
 * (a port in use, an upstream out of reach, a public bind without keys), 2 for a bad command line
 * (an unknown option, a bad value, an unreadable API keys file). A command may add its own above
 * these (the sidecar's 70: a bug).
 */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
} as const;

/** One of {@link ExitCode}'s values. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
