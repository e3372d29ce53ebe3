"""A Python host as its own process, for test_host_killed.py: it starts the sidecar, opens a
session on the runtime at argv[1] and sends a turn whose tool never returns; once the call is
running it prints ``{"sidecar_pid": <pid>}`` and waits to be killed."""

from __future__ import annotations

import asyncio
import json
import sys

import support
from toolrelay import start_sidecar, tool


async def main(url: str) -> None:
    sidecar = await start_sidecar(support.sidecar_command())

    @tool(description="Blocks until the host dies", input_schema={"type": "object"})
    async def block(arguments):
        print(json.dumps({"sidecar_pid": sidecar.pid}), flush=True)
        await asyncio.Event().wait()

    session = await sidecar.open_session(backend={"kind": "local", "url": url}, agent={"create": {"model": "scripted/test"}}, tools=[block])
    await session.send("CALL block {}").end()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
