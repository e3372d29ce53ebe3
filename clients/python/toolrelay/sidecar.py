"""Start ``toolrelay-sidecar`` as a child process and talk to it over its stdio."""

from __future__ import annotations

import asyncio
import itertools
import os
import shlex
import shutil
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence

from .faults import SessionOpenError, SidecarError, SidecarGone
from .approvals import ApprovalCallback
from .frames import APPROVALS_PROTOCOL_VERSION, DEFAULT_MAX_FRAME_BYTES, ENCODINGS, PROTOCOL_VERSIONS, FrameError, decode_body, encode_frame, header_size
from .session import Session
from .tools import Tool

_session_numbers = itertools.count(1)


def default_command() -> List[str]:
    """``$TOOLRELAY_SIDECAR`` (split like a shell would), else ``toolrelay-sidecar`` on the PATH."""
    configured = os.environ.get("TOOLRELAY_SIDECAR")
    if configured:
        return shlex.split(configured)
    found = shutil.which("toolrelay-sidecar")
    if found is None:
        raise FileNotFoundError("toolrelay-sidecar is not on the PATH: install the toolrelay npm package, or pass command=[...] or set TOOLRELAY_SIDECAR")
    return [found]


def minimal_environment(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """What the sidecar gets by default: PATH (and SYSTEMROOT on Windows) -- no credential of this process."""
    env = {name: os.environ[name] for name in ("PATH", "SYSTEMROOT") if name in os.environ}
    env.update(extra or {})
    return env


class Sidecar:
    """A running sidecar. Start it with :func:`start_sidecar`; close it with :meth:`close` (or ``async with``)."""

    def __init__(self, process: "asyncio.subprocess.Process", encoding: str) -> None:
        self.process = process
        self.encoding = encoding
        #: The sidecar's ``welcome`` (version, limits), once greeted.
        self.welcome: Dict[str, Any] = {}
        #: Error frames not about a session of this host.
        self.errors: List[SidecarError] = []
        #: Called with each of them, if set.
        self.on_error: Optional[Callable[[SidecarError], None]] = None
        #: If set, called with ``("out", frame)`` / ``("in", frame)`` for every frame (tests, debugging:
        #: frames carry prompts, inputs and results).
        self.trace: Optional[Callable[[str, Dict[str, Any]], None]] = None
        self._sessions: Dict[str, Session] = {}
        self._opening: Dict[str, "asyncio.Future[Dict[str, Any]]"] = {}
        loop = asyncio.get_running_loop()
        self._welcomed: "asyncio.Future[Dict[str, Any]]" = loop.create_future()
        self._goodbye: "asyncio.Future[None]" = loop.create_future()
        self._gone: Optional[SidecarGone] = None
        # One drain at a time: Python before 3.10 refuses concurrent drains of one stream.
        self._drain_lock = asyncio.Lock()
        self._reader = loop.create_task(self._read_frames())

    @property
    def pid(self) -> int:
        return self.process.pid

    async def _hello(self, client: str) -> None:
        await self._send({"type": "hello", "versions": list(PROTOCOL_VERSIONS), "client": {"name": client}})
        self.welcome = await self._welcomed

    async def open_session(
        self,
        *,
        backend: Dict[str, Any],
        agent: Dict[str, Any],
        tools: Sequence[Tool] = (),
        conversation: Optional[str] = None,
        options: Optional[Dict[str, Any]] = None,
        session_id: Optional[str] = None,
        on_approval: Optional[ApprovalCallback] = None,
    ) -> Session:
        """Open a session with ``tools`` (they run here, in this process). Raises
        :class:`SessionOpenError` with the sidecar's code (``connect_failed``, ``invalid_tool_definition``...).

        ``on_approval``: answers approvals (see :mod:`toolrelay.approvals`) -- the calls of the
        ``needs_approval=True`` tools and of the runtime's own tools (Bash, Write...) that the mode
        does not let run at once. It sets ``options["approvals"] = True``. Without it those runtime
        tool calls are denied, and a ``needs_approval`` tool fails the session (``invalid_options``)."""
        session_id = session_id or "session-%d" % next(_session_numbers)
        if on_approval is not None:
            if not callable(on_approval):
                raise TypeError("on_approval must be callable")
            if self.welcome.get("version", 1) < APPROVALS_PROTOCOL_VERSION:
                raise ValueError("on_approval needs sidecar protocol version %d; this sidecar speaks %s" % (APPROVALS_PROTOCOL_VERSION, self.welcome.get("version")))
            options = dict(options or {}, approvals=True)
        frame: Dict[str, Any] = {"type": "open_session", "session": session_id, "backend": backend, "agent": agent, "tools": [tool.definition() for tool in tools]}
        if conversation is not None:
            frame["conversation"] = conversation
        if options is not None:
            frame["options"] = options
        session = Session(self, session_id, list(tools), on_approval)
        opened: "asyncio.Future[Dict[str, Any]]" = asyncio.get_running_loop().create_future()
        self._opening[session_id] = opened
        self._sessions[session_id] = session
        try:
            await self._send(frame)
            answer = await opened
        except BaseException:
            self._sessions.pop(session_id, None)
            raise
        finally:
            self._opening.pop(session_id, None)
        session.agent_id = answer.get("agent_id", "")
        session.conversation_id = answer.get("conversation_id", "")
        session.tool_names = list(answer.get("tools", []))
        return session

    async def close(self, timeout: float = 5.0) -> int:
        """``shutdown``: every session closes, the sidecar answers ``goodbye`` and exits. Killed if it
        takes longer than ``timeout`` seconds. Returns its exit code."""
        if self._gone is None:
            try:
                await self._send({"type": "shutdown"})
                await asyncio.wait_for(asyncio.shield(self._goodbye), timeout)
            except (SidecarGone, asyncio.TimeoutError):
                pass
        try:
            return await asyncio.wait_for(self.process.wait(), timeout)
        except asyncio.TimeoutError:
            self.process.kill()
            return await self.process.wait()
        finally:
            self._close_stdin()

    async def __aenter__(self) -> "Sidecar":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def _write(self, frame: Dict[str, Any]) -> None:
        if self._gone is not None:
            raise self._gone
        stdin = self.process.stdin
        assert stdin is not None
        if self.trace is not None:
            self.trace("out", frame)
        try:
            stdin.write(encode_frame(frame, self.encoding))
        except (BrokenPipeError, ConnectionResetError) as error:
            self._lost("its stdin is closed: %s" % error)
            raise self._gone from error  # type: ignore[misc]

    async def _send(self, frame: Dict[str, Any]) -> None:
        self._write(frame)
        try:
            async with self._drain_lock:
                await self.process.stdin.drain()  # type: ignore[union-attr]
        except (BrokenPipeError, ConnectionResetError) as error:
            self._lost("its stdin is closed: %s" % error)
            raise self._gone from error  # type: ignore[misc]

    async def _read_frames(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            while True:
                header = await stdout.readexactly(4)
                body = await stdout.readexactly(header_size(header))
                try:
                    frame = decode_body(body, self.encoding)
                except FrameError as error:
                    self._error(SidecarError("unreadable_frame", str(error)))
                    continue
                if self.trace is not None:
                    self.trace("in", frame)
                self._on_frame(frame)
        except asyncio.IncompleteReadError:
            self._lost("it exited (code %s)" % self.process.returncode)
        except Exception as error:  # Never leave the reader dead with waiters.
            self._lost("reading its output failed: %s" % error)

    def _on_frame(self, frame: Dict[str, Any]) -> None:
        kind = frame["type"]
        if kind == "welcome":
            if not self._welcomed.done():
                self._welcomed.set_result(frame)
        elif kind == "session_opened":
            opened = self._opening.get(frame.get("session"))
            if opened is not None and not opened.done():
                opened.set_result(frame)
        elif kind == "goodbye":
            if not self._goodbye.done():
                self._goodbye.set_result(None)
        elif kind == "error":
            self._on_error_frame(frame)
        else:
            session = self._sessions.get(frame.get("session"))
            if session is not None:
                session._on_frame(frame)
                if kind == "session_closed":
                    self._sessions.pop(session.id, None)

    def _on_error_frame(self, frame: Dict[str, Any]) -> None:
        code, message = frame.get("code", "unknown"), frame.get("message", "")
        about = frame.get("frame_type")
        if about == "hello" and not self._welcomed.done():
            self._welcomed.set_exception(SidecarError(code, message, frame))
            return
        opened = self._opening.get(frame.get("session"))
        if about == "open_session" and opened is not None and not opened.done():
            opened.set_exception(SessionOpenError(code, message, frame))
            return
        session = self._sessions.get(frame.get("session"))
        if session is not None:
            session._on_error(SidecarError(code, message, frame))
        else:
            self._error(SidecarError(code, message, frame))

    def _error(self, error: SidecarError) -> None:
        self.errors.append(error)
        if self.on_error is not None:
            self.on_error(error)

    def _lost(self, why: str) -> None:
        if self._gone is not None:
            return
        self._gone = SidecarGone("the sidecar is gone: %s" % why)
        for future in [self._welcomed, self._goodbye, *self._opening.values()]:
            if not future.done():
                future.set_exception(self._gone)
                future.add_done_callback(lambda done: done.exception())
        for session in list(self._sessions.values()):
            session._gone(self._gone)
        self._sessions.clear()

    def _close_stdin(self) -> None:
        stdin = self.process.stdin
        if stdin is not None and not stdin.is_closing():
            stdin.close()


class _Starting:
    """What :func:`start_sidecar` returns: ``await`` it, or use it as ``async with``."""

    def __init__(self, start: Callable[[], Any]) -> None:
        self._start = start
        self._sidecar: Optional[Sidecar] = None

    def __await__(self):  # type: ignore[no-untyped-def]
        return self._start().__await__()

    async def __aenter__(self) -> Sidecar:
        self._sidecar = await self._start()
        return self._sidecar

    async def __aexit__(self, *exc: Any) -> None:
        if self._sidecar is not None:
            await self._sidecar.close()


def start_sidecar(
    command: Optional[Sequence[str]] = None,
    *,
    encoding: str = "json",
    debug: bool = False,
    max_frame_bytes: Optional[int] = None,
    env: Optional[Dict[str, str]] = None,
    stderr: Any = None,
    client_name: str = "toolrelay-python",
) -> _Starting:
    """Start the sidecar and greet it. ``command``: how to run it (default :func:`default_command`);
    ``env``: added to the minimal environment it gets (PATH only -- it reads no credential it was
    not handed); ``stderr``: where its diagnostics go (``--debug`` only; default: this process's
    stderr). ``await start_sidecar()`` or ``async with start_sidecar() as sidecar``."""
    if encoding not in ENCODINGS:
        raise ValueError("encoding must be one of %s" % (ENCODINGS,))

    async def start() -> Sidecar:
        arguments = list(command) if command is not None else default_command()
        arguments += ["--encoding", encoding]
        if max_frame_bytes is not None and max_frame_bytes != DEFAULT_MAX_FRAME_BYTES:
            arguments += ["--max-frame-bytes", str(max_frame_bytes)]
        if debug:
            arguments.append("--debug")
        process = await asyncio.create_subprocess_exec(
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr if stderr is not None else sys.stderr,
            env=minimal_environment(env),
        )
        sidecar = Sidecar(process, encoding)
        try:
            await sidecar._hello(client_name)
        except BaseException:
            await sidecar.close(timeout=1.0)
            raise
        return sidecar

    return _Starting(start)
