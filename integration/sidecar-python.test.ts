/**
 * The Python host library's own test suite (clients/python/tests, stdlib
 * unittest), run by `npm test` exactly as its README says: `python3 -m
 * unittest discover -s tests -v` in clients/python. It needs the built sidecar
 * (dist/, which `npm test` builds first) and the real Letta Code peer (which
 * the pretest step installs). Every test must pass and none may be skipped;
 * the tests behind the "done when" are checked by name.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const pythonRoot = fileURLToPath(new URL("../clients/python/", import.meta.url));

interface UnittestRun {
  code: number | null;
  output: string;
  /** test name → `ok`, `FAIL`, `ERROR`, `skipped ...` */
  verdicts: Map<string, string>;
}

function runUnittest(): Promise<UnittestRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("python3", ["-m", "unittest", "discover", "-s", "tests", "-v"], {
      cwd: pythonRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: "1", PYTHONUNBUFFERED: "1" },
    });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.stderr.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.once("error", reject);
    child.once("exit", (code) => {
      const verdicts = new Map<string, string>();
      for (const match of output.matchAll(/^(test_\w+) \([\w.]+\)[^\n]*?\.\.\. (?:[^\n]*\n)*?(ok|FAIL|ERROR|skipped[^\n]*)$/gm)) {
        verdicts.set(match[1]!, match[2]!);
      }
      resolve({ code, output, verdicts });
    });
  });
}

describe("the Python host library's tests (clients/python)", () => {
  it("all pass, none skipped, the done-when tests among them", { timeout: 300_000 }, async () => {
    const run = await runUnittest();
    const summary = /Ran (\d+) tests? in [\d.]+s\s+(OK[^\n]*|FAILED[^\n]*)/.exec(run.output);
    expect(summary, run.output.slice(-4_000)).not.toBeNull();
    expect(summary![2], run.output.slice(-6_000)).toBe("OK");
    expect(run.code).toBe(0);
    expect(run.output).not.toMatch(/skipped/i);
    for (const name of [
      // A Python function as the tool, against the real app-server: the model's next request carries its result.
      "test_a_python_function_runs_as_the_tool_and_the_models_next_request_carries_its_result",
      // An extra key and a missing field reach the handler as sent; its verdict reaches the model (real and scripted).
      "test_an_extra_key_and_a_missing_field_reach_the_python_handler_as_sent_and_its_verdict_reaches_the_model",
      "test_an_extra_key_and_a_missing_field_reach_the_handler_as_sent_and_its_verdict_reaches_the_model",
      // Every end of a turn as its named fault.
      "test_a_python_function_is_the_tool_and_its_result_is_what_the_model_reads",
      "test_a_handler_that_raises_ends_the_turn_tool_error_and_the_model_reads_why",
      "test_a_handler_past_its_deadline_is_cancelled_and_the_turn_ends_tool_timeout",
      "test_cancel_aborts_the_running_call_and_the_turn_ends_cancelled",
      "test_a_failing_model_ends_runtime_error",
      "test_a_lost_link_ends_link_lost_and_the_session_goes_on",
      // Killing the host leaves no sidecar after 1 s (by PID).
      "test_killing_the_host_leaves_no_sidecar_after_one_second",
      // Approvals against the real app-server: a needs_approval tool runs only when the Python callback allows it,
      // denied the model reads the declined text and the tool never ran; the runtime's Bash asks the same callback.
      "test_a_needs_approval_tool_runs_only_when_the_python_callback_allows_it_and_denied_the_model_reads_the_declined_text",
      "test_the_runtimes_bash_asks_the_python_callback_and_runs_only_when_it_allows",
      "test_an_unanswered_approval_is_cancelled_at_the_sessions_timeout_and_the_model_reads_that_nobody_answered",
      // The shared fixtures, both encodings.
      "test_every_frame_round_trips_byte_for_byte_in_both_encodings",
    ]) {
      expect(run.verdicts.get(name), `${name}\n${run.output.slice(-3_000)}`).toBe("ok");
    }
    expect(Number(summary![1])).toBe(run.verdicts.size);
  });
});
