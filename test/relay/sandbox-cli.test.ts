/** The relay CLI's `--sandbox-*` flags. */
import { describe, expect, it } from "vitest";
import { CliUsageError, parseCommandLine } from "@toolrelay/cli-kit";
import { RELAY_COMMAND, relayOptionsOf } from "../../packages/relay/src/cli.js";

const quiet = { stdout: () => {}, stderr: () => {} };

/** The relay options of a command line (through the CLI's own parser and option table). */
function parseRelayCliArguments(argv: string[], io: typeof quiet) {
  const line = parseCommandLine(RELAY_COMMAND, argv);
  if (line.kind !== "run") throw new Error(`expected options, got ${line.kind}`);
  return relayOptionsOf(line.arguments, io);
}

describe("relay CLI sandbox flags", () => {
  it("turn into sandbox options: command, args (also ones starting with -), env, read-only paths, isolation, directory, shared state, minute", () => {
    const options = parseRelayCliArguments(
      [
        "--sandbox-command",
        "/opt/node/bin/node",
        "--sandbox-arg",
        "/opt/letta/letta.js",
        "--sandbox-arg=server",
        "--sandbox-arg=--debug",
        "--sandbox-env",
        "PATH=/usr/bin:/bin",
        "--sandbox-env",
        "LLAMA_CPP_BASE_URL=http://127.0.0.1:9/v1?a=b",
        "--sandbox-read-only",
        "/opt/letta",
        "--sandbox-isolation",
        "none",
        "--sandbox-dir",
        "/var/tmp/sandboxes",
        "--sandbox-shared-state-env",
        "LETTA_LOCAL_BACKEND_DIR",
        "--sandbox-minute-ms",
        "5000",
        "--max-sandboxes-per-tenant",
        "3",
      ],
      quiet,
    );
    expect(options).toMatchObject({
      maxSandboxesPerTenant: 3,
      sandbox: {
        command: "/opt/node/bin/node",
        args: ["/opt/letta/letta.js", "server", "--debug"],
        env: { PATH: "/usr/bin:/bin", LLAMA_CPP_BASE_URL: "http://127.0.0.1:9/v1?a=b" },
        readOnlyPaths: ["/opt/letta"],
        isolation: "none",
        directory: "/var/tmp/sandboxes",
        sharedStateEnv: "LETTA_LOCAL_BACKEND_DIR",
        minuteMs: 5000,
      },
    });
  });

  it("no --sandbox-command: no sandboxes (and no default binary)", () => {
    expect(parseRelayCliArguments([], quiet)?.sandbox).toBeUndefined();
  });

  it.each([
    [["--sandbox-arg", "x"], "--sandbox-arg needs --sandbox-command"],
    [["--sandbox-env", "A=b"], "--sandbox-env needs --sandbox-command"],
    [["--sandbox-command", "/bin/true", "--sandbox-env", "NOVALUE"], "NAME=VALUE"],
    [["--sandbox-command", "/bin/true", "--sandbox-env", "=x"], "NAME=VALUE"],
    [["--sandbox-command", "/bin/true", "--sandbox-isolation", "chroot"], "namespace or none"],
    [["--sandbox-command", "/bin/true", "--sandbox-minute-ms", "1.5"], "positive integer"],
  ])("refuses %j", (argv, message) => {
    expect(() => parseRelayCliArguments(argv, quiet)).toThrow(CliUsageError);
    expect(() => parseRelayCliArguments(argv, quiet)).toThrow(message);
  });
});
