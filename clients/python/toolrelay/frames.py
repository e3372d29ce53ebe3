"""Sidecar frames: a 4-byte big-endian length, then the body -- UTF-8 JSON (the default) or
MessagePack. The same bytes as the sidecar writes: compact JSON with keys in insertion order,
the smallest MessagePack formats.
"""

from __future__ import annotations

import json
import struct
from typing import Any, Dict

from . import _msgpack

HEADER_BYTES = 4
#: The newest protocol version this library speaks (2: approvals).
PROTOCOL_VERSION = 2
#: Every protocol version this library speaks, offered in ``hello``; the sidecar picks the highest it shares.
PROTOCOL_VERSIONS = (1, 2)
#: The first protocol version with approvals (``needs_approval``, ``on_approval``).
APPROVALS_PROTOCOL_VERSION = 2
#: The sidecar's default largest frame body (16 MiB).
DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024
ENCODINGS = ("json", "msgpack")


class FrameError(ValueError):
    """A frame could not be encoded or decoded."""


def encode_body(frame: Dict[str, Any], encoding: str = "json") -> bytes:
    """The body of ``frame`` in ``encoding``."""
    if encoding == "json":
        try:
            return json.dumps(frame, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
        except (TypeError, ValueError) as error:
            raise FrameError("the frame is not JSON: %s" % error) from error
    if encoding == "msgpack":
        try:
            return _msgpack.packb(frame)
        except _msgpack.MsgpackError as error:
            raise FrameError("the frame is not MessagePack: %s" % error) from error
    raise FrameError("unknown encoding %r" % encoding)


def decode_body(body: bytes, encoding: str = "json") -> Dict[str, Any]:
    """The frame in ``body``: a dict with a string ``type``."""
    try:
        if encoding == "json":
            value = json.loads(body.decode("utf-8"))
        elif encoding == "msgpack":
            value = _msgpack.unpackb(body)
        else:
            raise FrameError("unknown encoding %r" % encoding)
    except (UnicodeDecodeError, ValueError) as error:
        if isinstance(error, FrameError):
            raise
        raise FrameError("the body is not %s: %s" % (encoding, error)) from error
    if not isinstance(value, dict) or not isinstance(value.get("type"), str):
        raise FrameError('a frame must be an object with a string "type"')
    return value


def encode_frame(frame: Dict[str, Any], encoding: str = "json") -> bytes:
    """The length prefix and the body of ``frame``: what goes on the wire."""
    body = encode_body(frame, encoding)
    return struct.pack(">I", len(body)) + body


def decode_frames(data: bytes, encoding: str = "json") -> list:
    """Every frame in ``data`` (whole frames only; a partial last frame is an error)."""
    frames = []
    at = 0
    while at < len(data):
        if at + HEADER_BYTES > len(data):
            raise FrameError("a partial length prefix at byte %d" % at)
        (size,) = struct.unpack(">I", data[at:at + HEADER_BYTES])
        at += HEADER_BYTES
        if at + size > len(data):
            raise FrameError("a frame declared %d bytes long, %d left" % (size, len(data) - at))
        frames.append(decode_body(data[at:at + size], encoding))
        at += size
    return frames


def header_size(header: bytes) -> int:
    """The body length a 4-byte prefix declares."""
    return struct.unpack(">I", header)[0]
