"""A small MessagePack codec for the sidecar's ``--encoding msgpack`` (standard library only).

It covers the JSON data model the protocol uses -- None, bool, int, float, str, list and dict
with string keys -- and writes the same bytes as the sidecar's encoder (``@msgpack/msgpack``):
the smallest integer and string formats, float64 for floats. Decoding also accepts float32 and
binary data (returned as ``bytes``); extension types are refused.
"""

from __future__ import annotations

import struct
from typing import Any, List, Tuple

MAX_DEPTH = 256


class MsgpackError(ValueError):
    """The bytes are not MessagePack this codec can read, or a value it cannot write."""


def packb(value: Any) -> bytes:
    """Encode ``value`` as MessagePack."""
    out: List[bytes] = []
    _pack(value, out, 0)
    return b"".join(out)


def _pack(value: Any, out: List[bytes], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise MsgpackError("nested deeper than %d levels" % MAX_DEPTH)
    if value is None:
        out.append(b"\xc0")
    elif value is True:
        out.append(b"\xc3")
    elif value is False:
        out.append(b"\xc2")
    elif isinstance(value, int):
        out.append(_pack_int(value))
    elif isinstance(value, float):
        out.append(b"\xcb" + struct.pack(">d", value))
    elif isinstance(value, str):
        data = value.encode("utf-8")
        size = len(data)
        if size < 32:
            out.append(bytes([0xA0 | size]))
        elif size < 0x100:
            out.append(b"\xd9" + struct.pack(">B", size))
        elif size < 0x10000:
            out.append(b"\xda" + struct.pack(">H", size))
        else:
            out.append(b"\xdb" + struct.pack(">I", size))
        out.append(data)
    elif isinstance(value, (bytes, bytearray)):
        size = len(value)
        if size < 0x100:
            out.append(b"\xc4" + struct.pack(">B", size))
        elif size < 0x10000:
            out.append(b"\xc5" + struct.pack(">H", size))
        else:
            out.append(b"\xc6" + struct.pack(">I", size))
        out.append(bytes(value))
    elif isinstance(value, (list, tuple)):
        size = len(value)
        if size < 16:
            out.append(bytes([0x90 | size]))
        elif size < 0x10000:
            out.append(b"\xdc" + struct.pack(">H", size))
        else:
            out.append(b"\xdd" + struct.pack(">I", size))
        for item in value:
            _pack(item, out, depth + 1)
    elif isinstance(value, dict):
        size = len(value)
        if size < 16:
            out.append(bytes([0x80 | size]))
        elif size < 0x10000:
            out.append(b"\xde" + struct.pack(">H", size))
        else:
            out.append(b"\xdf" + struct.pack(">I", size))
        for key, item in value.items():
            if not isinstance(key, str):
                raise MsgpackError("map keys must be strings, got %s" % type(key).__name__)
            _pack(key, out, depth + 1)
            _pack(item, out, depth + 1)
    else:
        raise MsgpackError("cannot encode a %s" % type(value).__name__)


def _pack_int(value: int) -> bytes:
    if value >= 0:
        if value < 0x80:
            return bytes([value])
        if value < 0x100:
            return b"\xcc" + struct.pack(">B", value)
        if value < 0x10000:
            return b"\xcd" + struct.pack(">H", value)
        if value < 0x100000000:
            return b"\xce" + struct.pack(">I", value)
        if value < 0x10000000000000000:
            return b"\xcf" + struct.pack(">Q", value)
    else:
        if value >= -0x20:
            return struct.pack(">b", value)
        if value >= -0x80:
            return b"\xd0" + struct.pack(">b", value)
        if value >= -0x8000:
            return b"\xd1" + struct.pack(">h", value)
        if value >= -0x80000000:
            return b"\xd2" + struct.pack(">i", value)
        if value >= -0x8000000000000000:
            return b"\xd3" + struct.pack(">q", value)
    raise MsgpackError("an integer outside 64 bits")


def unpackb(data: bytes) -> Any:
    """Decode one MessagePack value that fills ``data`` exactly."""
    value, end = _unpack(memoryview(bytes(data)), 0, 0)
    if end != len(data):
        raise MsgpackError("%d bytes after the value" % (len(data) - end))
    return value


_FIXED = {
    0xCC: (">B", 1), 0xCD: (">H", 2), 0xCE: (">I", 4), 0xCF: (">Q", 8),
    0xD0: (">b", 1), 0xD1: (">h", 2), 0xD2: (">i", 4), 0xD3: (">q", 8),
    0xCA: (">f", 4), 0xCB: (">d", 8),
}
_SIZED = {
    0xD9: ("str", ">B", 1), 0xDA: ("str", ">H", 2), 0xDB: ("str", ">I", 4),
    0xC4: ("bin", ">B", 1), 0xC5: ("bin", ">H", 2), 0xC6: ("bin", ">I", 4),
    0xDC: ("array", ">H", 2), 0xDD: ("array", ">I", 4),
    0xDE: ("map", ">H", 2), 0xDF: ("map", ">I", 4),
}


def _take(data: memoryview, at: int, size: int) -> Tuple[memoryview, int]:
    if at + size > len(data):
        raise MsgpackError("truncated data")
    return data[at:at + size], at + size


def _unpack(data: memoryview, at: int, depth: int) -> Tuple[Any, int]:
    if depth > MAX_DEPTH:
        raise MsgpackError("nested deeper than %d levels" % MAX_DEPTH)
    head, at = _take(data, at, 1)
    byte = head[0]
    if byte <= 0x7F:
        return byte, at
    if byte >= 0xE0:
        return byte - 0x100, at
    if 0xA0 <= byte <= 0xBF:
        return _compound("str", byte & 0x1F, data, at, depth)
    if 0x90 <= byte <= 0x9F:
        return _compound("array", byte & 0x0F, data, at, depth)
    if 0x80 <= byte <= 0x8F:
        return _compound("map", byte & 0x0F, data, at, depth)
    if byte == 0xC0:
        return None, at
    if byte == 0xC2:
        return False, at
    if byte == 0xC3:
        return True, at
    if byte in _FIXED:
        fmt, size = _FIXED[byte]
        raw, at = _take(data, at, size)
        return struct.unpack(fmt, raw)[0], at
    if byte in _SIZED:
        kind, fmt, size = _SIZED[byte]
        raw, at = _take(data, at, size)
        return _compound(kind, struct.unpack(fmt, raw)[0], data, at, depth)
    raise MsgpackError("unsupported MessagePack format 0x%02x (extension types are not used)" % byte)


def _compound(kind: str, size: int, data: memoryview, at: int, depth: int) -> Tuple[Any, int]:
    if kind == "str":
        raw, at = _take(data, at, size)
        try:
            return str(raw, "utf-8"), at
        except UnicodeDecodeError as error:
            raise MsgpackError("a string that is not UTF-8") from error
    if kind == "bin":
        raw, at = _take(data, at, size)
        return bytes(raw), at
    if kind == "array":
        items = []
        for _ in range(size):
            item, at = _unpack(data, at, depth + 1)
            items.append(item)
        return items, at
    result = {}
    for _ in range(size):
        key, at = _unpack(data, at, depth + 1)
        if not isinstance(key, str):
            raise MsgpackError("map keys must be strings")
        result[key], at = _unpack(data, at, depth + 1)
    return result, at
