/** The CLI kit of the three executables: parsing, --help, errors with their causes, the API keys file. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  allApiKeys,
  type CliCommand,
  CliUsageError,
  describeError,
  ExitCode,
  parseCommandLine,
  readApiKeysFile,
  runCommand,
  usageText,
} from "@toolrelay/cli-kit";
import { afterAll, describe, expect, it } from "vitest";

const folder = mkdtempSync(join(tmpdir(), "cli-kit-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const command: CliCommand = {
  name: "demo",
  synopsis: "[options]",
  version: "1.2.3",
  groups: [
    {
      options: {
        port: { type: "string", value: "<n>", help: "port to listen on" },
        key: { type: "string", multiple: true, value: "<key>", help: "a key (repeatable)\nsecond line" },
        quiet: { type: "boolean", help: "say nothing" },
      },
    },
    { title: "More:", options: { "a-very-long-option-name-indeed": { type: "string", help: "pushed right" } } },
  ],
};

function captured() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (text: string) => out.push(text), stderr: (text: string) => err.push(text) }, out, err };
}

describe("parseCommandLine", () => {
  it("-h and --help ask for the usage, --version for the version, whatever else parses", () => {
    expect(parseCommandLine(command, ["-h"])).toEqual({ kind: "help" });
    expect(parseCommandLine(command, ["--quiet", "--help"])).toEqual({ kind: "help" });
    expect(parseCommandLine(command, ["--version"])).toEqual({ kind: "version" });
  });

  it("reads values by name: text (the last), list, flag, integer in a range", () => {
    const line = parseCommandLine(command, ["--port", "80", "--key", "a", "--key=b", "--quiet"]);
    if (line.kind !== "run") throw new Error("expected a run");
    const args = line.arguments;
    expect([args.text("port"), args.list("key"), args.text("key"), args.flag("quiet"), args.has("port")]).toEqual([
      "80",
      ["a", "b"],
      "b",
      true,
      true,
    ]);
    expect(args.integer("port", { max: 65_535 })).toBe(80);
    expect(() => args.text("colour")).toThrow(/no option --colour/);
  });

  it.each([
    [["--port=-1"], "--port must be an integer from 0 to 65535"],
    [["--port", "70000"], "--port must be an integer from 0 to 65535"],
    [["--port", "1.5"], "--port must be an integer from 0 to 65535"],
    [["--port", " 8"], "--port must be an integer from 0 to 65535"],
  ])("refuses the integer %j: %s", (argv, message) => {
    const line = parseCommandLine(command, argv);
    if (line.kind !== "run") throw new Error("expected a run");
    expect(() => line.arguments.integer("port", { max: 65_535 })).toThrow(new CliUsageError(message));
  });

  it.each([
    [["--colour"], "Unknown option '--colour'"],
    [["-x"], "Unknown option '-x'"],
    [["extra"], "Unexpected argument 'extra'"],
    [["--port"], "Option '--port <value>' argument missing"],
  ])("refuses %j as a usage error naming it", (argv, message) => {
    expect(() => parseCommandLine(command, argv)).toThrow(CliUsageError);
    expect(() => parseCommandLine(command, argv)).toThrow(message);
  });
});

describe("usageText", () => {
  it("shows every option once, with its value, its help lines aligned, and -h, --help and --version last", () => {
    expect(usageText(command)).toBe(
      [
        "Usage: demo [options]",
        "",
        "  --port <n>                    port to listen on",
        "  --key <key>                   a key (repeatable)",
        "                                second line",
        "  --quiet                       say nothing",
        "",
        "More:",
        "  --a-very-long-option-name-indeed <value>  pushed right",
        "",
        "  -h, --help                    print this text and exit",
        "  --version                     print the version and exit",
        "",
      ].join("\n"),
    );
  });

  it("refuses a command that declares an option twice (a bug, not a usage error)", () => {
    const twice: CliCommand = { ...command, groups: [...command.groups, { options: { quiet: { type: "boolean", help: "" } } }] };
    expect(() => parseCommandLine(twice, [])).toThrow("demo: option --quiet is declared twice");
  });
});

describe("runCommand", () => {
  it("--help and --version print on stdout and exit 0 without starting anything", async () => {
    for (const [argv, expected] of [
      [["-h"], usageText(command)],
      [["--help"], usageText(command)],
      [["--version"], "1.2.3\n"],
    ] as const) {
      const { io, out, err } = captured();
      const outcome = await runCommand(command, argv, () => expect.unreachable("started"), io);
      expect(outcome).toEqual({ exitCode: ExitCode.ok });
      expect([out.join(""), err.join("")]).toEqual([expected, ""]);
    }
  });

  it("a usage error (parsing or start's) prints the name, the message and the usage on stderr: exit 2", async () => {
    const unknown = captured();
    expect(await runCommand(command, ["--colour"], () => "started", unknown.io)).toEqual({ exitCode: 2 });
    expect(unknown.err.join("")).toBe(`demo: Unknown option '--colour'\n\n${usageText(command)}`);
    const refused = captured();
    expect(await runCommand(command, [], () => Promise.reject(new CliUsageError("--port is odd")), refused.io)).toEqual({ exitCode: 2 });
    expect(refused.err.join("")).toBe(`demo: --port is odd\n\n${usageText(command)}`);
    expect(refused.out).toEqual([]);
  });

  it("any other failure prints the error with its causes on stderr: exit 1; a start that works gives its value, exit 0", async () => {
    const failed = captured();
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    expect(await runCommand(command, [], () => Promise.reject(new Error("the upstream does not answer", { cause })), failed.io)).toEqual({
      exitCode: ExitCode.failure,
    });
    expect(failed.err.join("")).toBe("demo: the upstream does not answer: connect ECONNREFUSED 127.0.0.1:9\n");
    expect(await runCommand(command, ["--quiet"], (args) => args.flag("quiet"), captured().io)).toEqual({ exitCode: 0, started: true });
  });
});

describe("describeError", () => {
  it("a port in use: the OS reason and the address, not only the wrapper's words", async () => {
    const first = createServer();
    await new Promise<void>((resolve) => first.listen(0, "127.0.0.1", resolve));
    const { port } = first.address() as { port: number };
    const second = createServer();
    const error = await new Promise<Error>((resolve) => {
      second.once("error", resolve);
      second.listen(port, "127.0.0.1");
    });
    first.close();
    const wrapped = new Error(`relay: cannot listen on 127.0.0.1:${port}`, { cause: error });
    expect(describeError(wrapped)).toBe(
      `relay: cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
    );
  });

  it("each part once; a system code the messages lack is added; a cycle ends; non-errors are shown", () => {
    const inner = new Error("cannot connect to ws://127.0.0.1:9/ws: connect ECONNREFUSED 127.0.0.1:9");
    const outer = new Error("the app-server at ws://127.0.0.1:9/ws does not answer", {
      cause: new Error("connect ECONNREFUSED 127.0.0.1:9", { cause: inner }),
    });
    expect(describeError(outer)).toBe(
      "the app-server at ws://127.0.0.1:9/ws does not answer: connect ECONNREFUSED 127.0.0.1:9: cannot connect to ws://127.0.0.1:9/ws: connect ECONNREFUSED 127.0.0.1:9",
    );
    expect(describeError(Object.assign(new Error("cannot read the file"), { code: "ENOENT" }))).toBe("cannot read the file (ENOENT)");
    const looped = new Error("a");
    looped.cause = new Error("b", { cause: looped });
    expect(describeError(looped)).toBe("a: b");
    expect(describeError("plain text")).toBe("plain text");
    expect(describeError(new Error(""))).toBe("unknown error");
  });
});

describe("the API keys file", () => {
  it("one format: <key>, <tenant> <key> (both roles) or <tenant> listener|sdk <key>, blank lines and # comments skipped, spaces around words ignored", () => {
    const file = join(folder, "keys");
    writeFileSync(
      file,
      "# keys\nsolo-1\n\n  team-a   key-a1  \r\nteam-b key-b\nteam-a key-a2\n__proto__ key-p\n   # indented comment\nsolo-2\n" +
        "team-c listener key-c-listener\nteam-c  sdk  key-c-app\nteam-c sdk key-c-listener\n",
    );
    const keys = readApiKeysFile(file);
    expect(keys.apiKeys).toEqual(["solo-1", "solo-2"]);
    expect(Object.entries(keys.tenants)).toEqual([
      ["team-a", { listener: ["key-a1", "key-a2"], sdk: ["key-a1", "key-a2"] }],
      ["team-b", { listener: ["key-b"], sdk: ["key-b"] }],
      ["__proto__", { listener: ["key-p"], sdk: ["key-p"] }],
      ["team-c", { listener: ["key-c-listener"], sdk: ["key-c-app", "key-c-listener"] }],
    ]);
    expect(allApiKeys(keys)).toEqual(["solo-1", "solo-2", "key-a1", "key-a2", "key-b", "key-p", "key-c-listener", "key-c-app"]);
  });

  it("a line of three words without a role, or of four, is named by its number, never its text; a missing file by its path and code", () => {
    const forms = '"<key>", "<tenant> <key>" or "<tenant> listener|sdk <key>"';
    const file = join(folder, "bad-keys");
    writeFileSync(file, "team-a key-a1\nthree words here-secret\n");
    expect(() => readApiKeysFile(file)).toThrow(new CliUsageError(`${file} line 2: expected ${forms}`));
    writeFileSync(file, "team-a sdk key-a1\nteam-a sdk key-a2 here-secret\n");
    expect(() => readApiKeysFile(file)).toThrow(new CliUsageError(`${file} line 2: expected ${forms}`));
    const missing = join(folder, "missing");
    expect(() => readApiKeysFile(missing)).toThrow(new CliUsageError(`cannot read --api-keys-file ${missing}: ENOENT`));
  });
});
