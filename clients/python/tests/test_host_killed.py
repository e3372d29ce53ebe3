"""Killing the Python host (SIGKILL: no cleanup code runs) leaves no sidecar process: its stdin
ends, it answers the runtime's pending call, and it is gone within 1 s -- checked by its PID."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import unittest
from pathlib import Path

import support

HERE = Path(__file__).resolve().parent


class HostKilledTests(unittest.TestCase):
    def test_killing_the_host_leaves_no_sidecar_after_one_second(self) -> None:
        stack = support.Stack("scripted-stack.ts")
        host = None
        try:
            mark = stack.mark()
            host = subprocess.Popen([sys.executable, str(HERE / "host_program.py"), stack.ready["url"]], cwd=str(HERE), stdout=subprocess.PIPE, env=dict(os.environ, PYTHONPATH=str(HERE.parent)))
            line = host.stdout.readline()  # type: ignore[union-attr]
            self.assertTrue(line, "the host printed nothing (it exited with %s)" % host.poll())
            pid = json.loads(line)["sidecar_pid"]
            self.assertFalse(support.process_gone(pid), "the sidecar must be running while its host is")

            host.send_signal(signal.SIGKILL)
            killed_at = time.monotonic()
            host.wait(10)
            while not support.process_gone(pid) and time.monotonic() - killed_at < 1.0:
                time.sleep(0.01)
            gone_after = time.monotonic() - killed_at
            self.assertTrue(support.process_gone(pid), "sidecar %d still runs %.2f s after its host was killed" % (pid, gone_after))

            # Before it went, it answered the runtime's pending call (nothing left to time out in 5 minutes).
            answered = stack.wait_for(lambda entry: "tool_return" in entry, timeout=5.0, start=mark)["tool_return"]
            self.assertEqual(answered["tool"], "block")
            self.assertTrue(answered["isError"])
            self.assertIn("cancelled", answered["toolReturn"])
        finally:
            if host is not None:
                if host.poll() is None:
                    host.kill()
                    host.wait()
                if host.stdout is not None:
                    host.stdout.close()
            stack.stop()


if __name__ == "__main__":
    unittest.main()
