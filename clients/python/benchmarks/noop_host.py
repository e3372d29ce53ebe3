"""A Python host for the benchmark (bench/suites/sidecar.ts in the toolrelay repository): one
session on the runtime at ``--url`` whose ``noop`` tool answers ``ok``, as an ``async`` function
or a plain function (run in a thread) with ``--mode``. Prints one line, ``{"ready": true}``, once
the session is open; closes everything when its stdin ends.

    python3 noop_host.py --url ws://127.0.0.1:PORT/ws --label python-async --mode async
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from toolrelay import start_sidecar, tool  # noqa: E402


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--label", required=True)
    parser.add_argument("--mode", choices=("async", "sync"), default="async")
    arguments = parser.parse_args()

    if arguments.mode == "async":

        async def handler(_input):
            return "ok"

    else:

        def handler(_input):
            return "ok"

    noop = tool(name="noop", description="Does nothing and answers ok", input_schema={"type": "object"}, annotations={"readOnlyHint": True})(handler)
    async with start_sidecar() as sidecar:
        await sidecar.open_session(
            backend={"kind": "local", "url": arguments.url},
            agent={"id": "agent-bench"},
            tools=[noop],
            options={"client_info": {"name": arguments.label}},
        )
        print(json.dumps({"ready": True, "sidecar_pid": sidecar.pid}), flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)


if __name__ == "__main__":
    asyncio.run(main())
