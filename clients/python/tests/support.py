"""Shared helpers of the tests: where the repository and the built sidecar are, the helper
processes the tests talk to (the scripted runtime; the real app-server with a scripted model),
and a small JSON Schema checker for the protocol's published schemas (standard library only)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

REPO_ROOT = Path(__file__).resolve().parents[3]
FIXTURES = REPO_ROOT / "test" / "fixtures" / "sidecar"
SIDECAR_BIN = REPO_ROOT / "packages" / "toolrelay" / "dist" / "sidecar" / "bin.js"


def node() -> str:
    found = shutil.which("node")
    if found is None:
        raise RuntimeError("node is not on the PATH")
    return found


def sidecar_command() -> List[str]:
    """The sidecar the tests start: ``$TOOLRELAY_SIDECAR``, else the built packages/toolrelay/dist/sidecar/bin.js."""
    configured = os.environ.get("TOOLRELAY_SIDECAR")
    if configured:
        import shlex

        return shlex.split(configured)
    if not SIDECAR_BIN.exists():
        raise RuntimeError("packages/toolrelay/dist/sidecar/bin.js is missing: run `npm run build` in %s first (npm test does)" % REPO_ROOT)
    return [node(), str(SIDECAR_BIN)]


class Stack:
    """A helper process of the TypeScript test fixtures (``node --import tsx <script>``) that
    reports one JSON document per line on stdout. Stops when its stdin is closed."""

    def __init__(self, script: str, ready_timeout: float = 60.0) -> None:
        self.lines: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.seen: List[Dict[str, Any]] = []
        self._lock = threading.Lock()
        self.process = subprocess.Popen(
            [node(), "--import", "tsx", str(FIXTURES / script)],
            cwd=str(REPO_ROOT),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self._stderr: List[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self._stderr.append(self.process.stderr.read()), daemon=True).start()  # type: ignore[union-attr]
        self.ready = self.wait_for(lambda line: "ready" in line, ready_timeout)["ready"]

    def _read(self) -> None:
        for raw in self.process.stdout:  # type: ignore[union-attr]
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            with self._lock:
                self.seen.append(line)

    def wait_for(self, match: Callable[[Dict[str, Any]], bool], timeout: float = 10.0, start: int = 0) -> Dict[str, Any]:
        """The first line from index ``start`` of ``seen`` that matches."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for line in self.seen[start:]:
                    if match(line):
                        return line
            if self.process.poll() is not None:
                raise RuntimeError("%s exited (%s): %s" % (self.process.args, self.process.returncode, b"".join(self._stderr).decode(errors="replace")[-2000:]))
            time.sleep(0.01)
        raise TimeoutError("no matching line within %.1f s; seen %d lines" % (timeout, len(self.seen)))

    def mark(self) -> int:
        with self._lock:
            return len(self.seen)

    def since(self, start: int, key: str) -> List[Dict[str, Any]]:
        with self._lock:
            return [line[key] for line in self.seen[start:] if key in line]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.close()  # type: ignore[union-attr]
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                try:
                    stream.close()
                except OSError:
                    pass


def process_gone(pid: int) -> bool:
    """True once ``pid`` is no process any more (an exited child nobody reaped yet counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open("/proc/%d/stat" % pid) as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return False


def load_schemas() -> Dict[str, Dict[str, Dict[str, Any]]]:
    """The published JSON Schemas the TypeScript tests wrote: ``{"host": {type: schema}, "sidecar": {...}}``."""
    schemas: Dict[str, Dict[str, Dict[str, Any]]] = {}
    for direction in ("host", "sidecar"):
        folder = FIXTURES / "schemas" / direction
        schemas[direction] = {path.name[: -len(".schema.json")]: json.loads(path.read_text("utf-8")) for path in sorted(folder.glob("*.schema.json"))}
    return schemas


def schema_problems(value: Any, schema: Dict[str, Any], path: str = "$") -> List[str]:
    """What is wrong with ``value`` under ``schema``: the keywords the protocol's schemas use
    (type, const, enum, properties, required, additionalProperties, items, anyOf, minLength,
    maxLength, minimum, maximum, minItems, pattern)."""
    problems: List[str] = []
    if "anyOf" in schema:
        branches = [schema_problems(value, branch, path) for branch in schema["anyOf"]]
        if all(branches):
            problems.append("%s: matches no branch (%s)" % (path, min(branches, key=len)[0]))
        return problems
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and not any(_is_type(value, name) for name in kinds):
        return ["%s: expected %s, got %s" % (path, kind, type(value).__name__)]
    if "const" in schema and value != schema["const"]:
        problems.append("%s: expected %r" % (path, schema["const"]))
    if "enum" in schema and value not in schema["enum"]:
        problems.append("%s: not one of %r" % (path, schema["enum"]))
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0) or len(value) > schema.get("maxLength", float("inf")):
            problems.append("%s: length %d out of bounds" % (path, len(value)))
        if "pattern" in schema:
            import re

            if re.search(schema["pattern"], value) is None:
                problems.append("%s: does not match %s" % (path, schema["pattern"]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if value < schema.get("minimum", float("-inf")) or value > schema.get("maximum", float("inf")):
            problems.append("%s: %r out of bounds" % (path, value))
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            problems.append("%s: fewer than %d items" % (path, schema["minItems"]))
        if isinstance(schema.get("items"), dict):
            for index, item in enumerate(value):
                problems += schema_problems(item, schema["items"], "%s[%d]" % (path, index))
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                problems.append("%s.%s: is required" % (path, name))
        for name, item in value.items():
            if name in properties:
                problems += schema_problems(item, properties[name], "%s.%s" % (path, name))
            elif schema.get("additionalProperties") is False:
                problems.append("%s.%s: is not allowed" % (path, name))
            elif isinstance(schema.get("additionalProperties"), dict):
                problems += schema_problems(item, schema["additionalProperties"], "%s.%s" % (path, name))
    return problems


def _is_type(value: Any, name: str) -> bool:
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    return True


def frame_problems(frame: Dict[str, Any], direction: str, schemas: Optional[Dict[str, Dict[str, Dict[str, Any]]]] = None) -> List[str]:
    """Problems of one frame against the published schema of its type."""
    schemas = schemas or load_schemas()
    schema = schemas[direction].get(frame.get("type", ""))
    if schema is None:
        return ["no %s frame type %r in the schemas" % (direction, frame.get("type"))]
    return schema_problems(frame, schema)
