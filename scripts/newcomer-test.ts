/**
 * The newcomer test (issue 24): a new user's first hour, from the docs alone. It packs the SDK,
 * makes a fresh project in a temporary folder with `npm init -y` defaults (CommonJS), installs the
 * tarball and zod with the README's install line, sets up Letta Code by docs/getting-started.md's
 * local route, and runs — as the docs print them, extracted from the Markdown, never retyped —
 * the README's example and every program of getting-started marked `<!-- newcomer-test: run -->`,
 * each through the README's run command (`npx tsx <file>`), against the real app-server started
 * by the docs' own command, on this machine's Node (20) with no account. The model is a scripted
 * OpenAI-compatible server (test/support/scripted-model-server.ts) that asks for one call of the
 * program's client tool, then answers with its result; every program must exit 0, and the model
 * must have received a tool result that is not an error.
 *
 * What it does not run as printed, and why:
 * - the README's `npm install toolrelay zod`: `toolrelay` becomes the packed tarball (the package is
 *   not published from here);
 * - getting-started's `npm install --prefix ./letta-code @letta-ai/letta-code@X node@Y`: three of the
 *   CLI's dependencies are not on the registry this repository is tested against (test/letta-peer's
 *   README), so that folder gets test/letta-peer's install instead — the same pins, checked
 *   against the docs' here — and the block's other lines run as printed;
 * - step 2's `export` lines name the user's own model endpoint: the test sets those variables to
 *   the scripted model (plus a fresh HOME and Letta Code's no-telemetry variables).
 *
 * Usage: npx tsx scripts/newcomer-test.ts [--no-build] [--keep] [--readme <file>] [--guide <file>]
 * Exits non-zero, naming the step, when any step fails. Runs in about a minute.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { toolResultsSinceUser } from "../test/support/model-directives.js";
import { type ModelRequest, startScriptedModelServer } from "../test/support/scripted-model-server.js";
import { fencedBlocks, markedBlocks, programAt } from "./markdown-blocks.mjs";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const keep = args.includes("--keep");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const started = Date.now();
const PROGRAM_TIMEOUT_MS = 90_000;

/** Arguments the scripted model passes to each client tool the docs define (by the tool's name). */
function argumentsFor(toolName: string, notesFile: string): Record<string, unknown> | undefined {
  const table: Record<string, Record<string, unknown>> = {
    get_time: { timeZone: "Europe/Paris" },
    read_buffer: { path: notesFile },
  };
  return table[toolName];
}

class StepError extends Error {}

function optionValue(name: string): string | undefined {
  const index = args.indexOf(name);
  return index === -1 ? undefined : args[index + 1];
}

function step(name: string): void {
  console.log(`[newcomer] ${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s  ${name}`);
}

function fail(message: string): never {
  throw new StepError(message);
}

function run(command: string, commandArgs: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  const result = spawnSync(command, commandArgs, { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error ? String(result.error) : ""}`;
  if (result.status !== 0) fail(`\`${command} ${commandArgs.join(" ")}\` in ${cwd} exited ${result.status}:\n${output}`);
  return output;
}

/** Runs `command` through the shell, as a user's terminal would; resolves with its exit and output. */
function runShell(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    let output = "";
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
    };
    child.stdout.on("data", collect);
    child.stderr.on("data", collect);
    const deadline = setTimeout(() => killGroup(child), PROGRAM_TIMEOUT_MS);
    child.on("close", (code) => {
      clearTimeout(deadline);
      resolve({ code, output });
    });
  });
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve(true)));
  });
}

/** The code of the one block a `<!-- newcomer-test: <label> -->` marks in `markdown`. */
function markedCode(markdown: string, document: string, label: string): string {
  const found = markedBlocks(markdown, "newcomer-test").filter((marked) => marked.label === label);
  if (found.length !== 1) fail(`${document}: expected one block marked \`<!-- newcomer-test: ${label} -->\`, found ${found.length}`);
  return found[0]!.block.code;
}

/** Shell lines of a ```sh block: comments and blank lines dropped, `\` continuations joined. */
function shellLines(code: string): string[] {
  return code
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}

async function main(): Promise<void> {
  // `--readme <file>` / `--guide <file>` read other copies of the two pages (to see the test fail on a changed page).
  const readme = readFileSync(optionValue("--readme") ?? join(root, "README.md"), "utf8");
  const guide = readFileSync(optionValue("--guide") ?? join(root, "docs/getting-started.md"), "utf8");

  // What the docs print.
  const readmeBlocks = fencedBlocks(readme);
  const installLine = readmeBlocks.filter((block) => block.language === "sh").flatMap((block) => shellLines(block.code))[0];
  if (!installLine?.startsWith("npm install ")) fail(`README.md: the first shell line is not an \`npm install\`: ${installLine}`);
  const example = readmeBlocks.find((block) => block.language === "ts");
  const saveAndRun = /Save it as `([^`]+)` and run it with `([^`]+)`/.exec(readme);
  if (!example || !saveAndRun) fail("README.md: no example, or no sentence `Save it as `<file>` and run it with `<command>``");
  const [, exampleFile, runCommand] = saveAndRun;
  if (!runCommand!.includes(exampleFile!)) fail(`README.md: the run command \`${runCommand}\` does not name \`${exampleFile}\``);
  const installLetta = shellLines(markedCode(guide, "docs/getting-started.md", "install-letta-code"));
  const startServer = shellLines(markedCode(guide, "docs/getting-started.md", "start-server"));
  if (startServer.length !== 1) fail(`docs/getting-started.md: the start-server block should be one command, is ${startServer.length}`);
  const guidePrograms = markedBlocks(guide, "newcomer-test")
    .filter((marked) => marked.label === "run")
    .map((marked, index) => ({ name: `getting-started-${index + 1}`, code: programAt(marked.blocks, marked.index) }));
  if (guidePrograms.length === 0) fail("docs/getting-started.md: no block marked `<!-- newcomer-test: run -->`");

  // The Letta Code install the docs give: the same pins as the tested peer.
  const prefixInstall = /^npm install --prefix (\S+) (.+)$/.exec(installLetta[0] ?? "");
  if (!prefixInstall)
    fail(`docs/getting-started.md: the install block's first line is not \`npm install --prefix <folder> <packages>\`: ${installLetta[0]}`);
  const [, lettaFolder, specs] = prefixInstall;
  const peerManifest = JSON.parse(readFileSync(join(root, "test/letta-peer/package.json"), "utf8")) as {
    dependencies: Record<string, string>;
  };
  const pinned: Record<string, string> = {};
  for (const spec of specs!.split(/\s+/)) {
    const at = spec.lastIndexOf("@");
    const [name, version] = [spec.slice(0, at), spec.slice(at + 1)];
    if (peerManifest.dependencies[name] !== version) {
      fail(
        `docs/getting-started.md installs ${spec}; the tested peer (test/letta-peer/package.json) has ${name}@${peerManifest.dependencies[name]}`,
      );
    }
    pinned[name] = version;
  }

  step("the Letta Code peer (scripts/ensure-letta-peer.mjs)");
  run(process.execPath, [join(root, "scripts/ensure-letta-peer.mjs")], root);
  if (!args.includes("--no-build")) {
    step("build (npm run build -w toolrelay)");
    run(npm, ["run", "build", "-w", "toolrelay"], root);
  }
  const work = mkdtempSync(join(tmpdir(), "toolrelay-newcomer-"));
  const project = join(work, "my-app");
  const home = join(work, "home");
  mkdirSync(project);
  mkdirSync(home);
  const npmCache = run(npm, ["config", "get", "cache"], root).trim();
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    step("npm pack -w toolrelay");
    const packed = run(npm, ["pack", "-w", "toolrelay", "--pack-destination", work, "--silent"], root).trim().split("\n").at(-1)!;
    const tarball = join(work, packed.trim());

    const baseEnv: NodeJS.ProcessEnv = {
      ...process.env,
      NO_COLOR: "1",
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
      npm_config_prefer_offline: "true",
      npm_config_cache: npmCache,
      npm_config_yes: "true",
    };
    for (const key of Object.keys(baseEnv))
      if (key.startsWith("npm_") && !/^npm_config_(update_notifier|fund|audit|prefer_offline|cache|yes)$/.test(key)) delete baseEnv[key];

    step("npm init -y (a default project: CommonJS)");
    run(npm, ["init", "-y"], project, baseEnv);
    const install = installLine!.replace(/(^npm install .*?)\btoolrelay\b/, `$1${tarball}`);
    step(`${installLine} (toolrelay: the packed tarball)`);
    const installed = await runShell(install, project, baseEnv);
    if (installed.code !== 0) fail(`\`${install}\` exited ${installed.code}:\n${installed.output}`);

    step(`${installLetta[0]} (the tested peer's install: the same pins)`);
    const lettaDir = join(project, lettaFolder!);
    mkdirSync(lettaDir, { recursive: true });
    writeFileSync(join(lettaDir, "package.json"), `${JSON.stringify({ dependencies: pinned }, null, 2)}\n`);
    symlinkSync(join(root, "test/letta-peer/node_modules"), join(lettaDir, "node_modules"), "dir");
    for (const line of installLetta.slice(1)) {
      step(line);
      const result = await runShell(line, project, baseEnv);
      if (result.code !== 0) fail(`\`${line}\` exited ${result.code}:\n${result.output}`);
      console.log(`           ${result.output.trim().split("\n").at(-1)}`);
    }

    // The model, and the environment of getting-started's step 2.
    const notesFile = join(project, "notes.txt");
    writeFileSync(notesFile, `Notes of the newcomer test, ${new Date().toISOString()}\n`);
    const model = await startScriptedModelServer({
      script: (request: ModelRequest) => {
        const results = toolResultsSinceUser(request);
        if (results.length > 0) return { text: `done: ${results.join(" | ")}` };
        const tool = request.toolNames.find((name) => argumentsFor(name, notesFile) !== undefined);
        if (!tool) return { text: "no tool of the docs was offered" };
        return { text: "Let me check.", toolCalls: [{ name: tool, arguments: argumentsFor(tool, notesFile)! }] };
      },
    });
    cleanups.push(() => model.close());
    const env: NodeJS.ProcessEnv = {
      ...baseEnv,
      HOME: home,
      LETTA_LOCAL_BACKEND_EXPERIMENTAL: "1",
      LLAMA_CPP_BASE_URL: model.url,
      LETTA_MODEL: model.modelHandle,
      LETTA_CODE_TELEM: "0",
      DO_NOT_TRACK: "1",
      DISABLE_AUTOUPDATER: "1",
    };

    const command = startServer[0]!;
    const port = /ws:\/\/127\.0\.0\.1:(\d+)/.exec(command)?.[1];
    if (port && !(await portIsFree(Number(port)))) fail(`port ${port} is in use: the docs' server command (\`${command}\`) needs it`);
    step(command);
    const server = spawn("sh", ["-c", command], { cwd: project, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    cleanups.push(() => killGroup(server));
    let serverOutput = "";
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new StepError(`no "WebSocket: ws://…" line within 60 s:\n${serverOutput}`)), 60_000);
      const onData = (chunk: Buffer) => {
        serverOutput += chunk.toString();
        if (/WebSocket: ws:\/\/\S+/.test(serverOutput)) {
          clearTimeout(deadline);
          resolve();
        }
      };
      server.stdout.on("data", onData);
      server.stderr.on("data", onData);
      server.once("exit", (code) => reject(new StepError(`the server exited (${code}) before listening:\n${serverOutput}`)));
    });
    console.log(`           ${/WebSocket: ws:\/\/\S+/.exec(serverOutput)![0]}`);

    const programs = [
      { name: "README example", file: exampleFile!, code: `${example!.code}\n` },
      ...guidePrograms.map((program) => ({ ...program, file: `${program.name}.mts` })),
    ];
    let toolCalls = 0;
    let exampleCalls = 0;
    for (const program of programs) {
      writeFileSync(join(project, program.file), program.code);
      const programCommand = runCommand!.replace(exampleFile!, program.file);
      const fromRequest = model.requests.length;
      step(`${program.name}: ${programCommand}`);
      const result = await runShell(programCommand, project, env);
      console.log(result.output.trim().replace(/^/gm, "           | "));
      if (result.code !== 0) fail(`${program.name}: \`${programCommand}\` exited ${result.code}`);
      const results = model.requests.slice(fromRequest).flatMap((request) => request.toolResults);
      const failed = results.filter(
        (toolResult) => toolResult.text.startsWith("Error:") || /External tool execution error/.test(toolResult.text),
      );
      if (failed.length > 0)
        fail(`${program.name}: the model got a failed tool result: ${failed.map((toolResult) => toolResult.text).join(" | ")}`);
      if (program.file === exampleFile) {
        if (results.length === 0) fail(`${program.name}: the turn made no tool call`);
        exampleCalls = results.length;
      }
      toolCalls += results.length;
    }
    if (toolCalls === exampleCalls) fail("docs/getting-started.md: its programs made no tool call");
    step(`passed: ${programs.length} programs, ${toolCalls} tool call(s) answered in the user's process`);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup();
    if (keep) console.log(`[newcomer] kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(
      `[newcomer] FAILED: ${error instanceof StepError ? error.message : error instanceof Error ? error.stack : String(error)}`,
    );
    process.exit(1);
  },
);
