"""The protobuf wire format, read: just what an ONNX file needs. Pure Python,
so that models load in Pyodide, where there is no protobuf package.

A message is a sequence of fields, each a key (field number << 3 | wire type)
as a varint followed by its value: a varint (type 0), 8 bytes (type 1), a
length-prefixed run of bytes (type 2: strings, bytes, nested messages and
packed repeated numbers) or 4 bytes (type 5). Length-prefixed values are
returned as memoryview slices of the input, so that a model's weights are
never copied while it is parsed.
"""
from __future__ import annotations

import struct
from typing import Iterator, Union

Value = Union[int, memoryview]

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


from ._errors import DecodeError as DecodeError  # noqa: E402  (one class for both runners)


def varint(buf: memoryview, pos: int) -> tuple[int, int]:
    """The unsigned varint at buf[pos:] and the position after it."""
    result = shift = 0
    end = len(buf)
    while True:
        if pos >= end:
            raise DecodeError("a varint runs past the end of its message")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise DecodeError("a varint is longer than 10 bytes")


def signed64(value: int) -> int:
    """An int64/int32 field's value: negative numbers travel as 64-bit two's complement."""
    value &= 0xFFFFFFFFFFFFFFFF
    return value - (1 << 64) if value >= 1 << 63 else value


def fields(buf: memoryview) -> Iterator[tuple[int, int, Value]]:
    """(field number, wire type, value) for every field of the message in buf."""
    pos, end = 0, len(buf)
    while pos < end:
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise DecodeError("field number 0")
        if wire == VARINT:
            value, pos = varint(buf, pos)
            yield number, wire, value
        elif wire == LENGTH:
            size, pos = varint(buf, pos)
            if pos + size > end:
                raise DecodeError(f"field {number}: {size} bytes run past the end of the message")
            yield number, wire, buf[pos:pos + size]
            pos += size
        elif wire == FIXED32:
            if pos + 4 > end:
                raise DecodeError(f"field {number}: truncated 4-byte value")
            yield number, wire, int.from_bytes(buf[pos:pos + 4], "little")
            pos += 4
        elif wire == FIXED64:
            if pos + 8 > end:
                raise DecodeError(f"field {number}: truncated 8-byte value")
            yield number, wire, int.from_bytes(buf[pos:pos + 8], "little")
            pos += 8
        else:   # 3 and 4 are the long-deprecated groups; 6 and 7 do not exist
            raise DecodeError(f"field {number}: unsupported wire type {wire}")


def text(value: Value, what: str) -> str:
    if not isinstance(value, memoryview):
        raise DecodeError(f"{what}: expected a string")
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError:
        raise DecodeError(f"{what}: not UTF-8") from None


def message(value: Value, what: str) -> memoryview:
    if not isinstance(value, memoryview):
        raise DecodeError(f"{what}: expected a nested message")
    return value


def ints(wire: int, value: Value, what: str) -> list[int]:
    """A repeated int64/int32 field's values from one occurrence: packed
    (length-prefixed varints) or a single varint."""
    if wire == VARINT:
        return [signed64(value)]   # type: ignore[arg-type]
    if wire != LENGTH:
        raise DecodeError(f"{what}: expected integers")
    out, pos, view = [], 0, value
    while pos < len(view):           # type: ignore[arg-type]
        v, pos = varint(view, pos)   # type: ignore[arg-type]
        out.append(signed64(v))
    return out


def uints(wire: int, value: Value, what: str) -> list[int]:
    """A repeated uint64 field's values (packed or one varint), unsigned."""
    if wire == VARINT:
        return [value]   # type: ignore[list-item]
    if wire != LENGTH:
        raise DecodeError(f"{what}: expected integers")
    out, pos = [], 0
    while pos < len(value):          # type: ignore[arg-type]
        v, pos = varint(value, pos)  # type: ignore[arg-type]
        out.append(v)
    return out


def floats(wire: int, value: Value, what: str) -> list[float]:
    """A repeated float field's values from one occurrence (packed or one fixed32)."""
    if wire == FIXED32:
        return list(struct.unpack("<f", value.to_bytes(4, "little")))   # type: ignore[union-attr]
    if wire != LENGTH or len(value) % 4:                                 # type: ignore[arg-type]
        raise DecodeError(f"{what}: expected packed 4-byte floats")
    return list(struct.unpack(f"<{len(value) // 4}f", value))          # type: ignore[arg-type]


def doubles(wire: int, value: Value, what: str) -> list[float]:
    """A repeated double field's values from one occurrence (packed or one fixed64)."""
    if wire == FIXED64:
        return list(struct.unpack("<d", value.to_bytes(8, "little")))   # type: ignore[union-attr]
    if wire != LENGTH or len(value) % 8:                                 # type: ignore[arg-type]
        raise DecodeError(f"{what}: expected packed 8-byte doubles")
    return list(struct.unpack(f"<{len(value) // 8}d", value))          # type: ignore[arg-type]


def float32(wire: int, value: Value, what: str) -> float:
    if wire != FIXED32:
        raise DecodeError(f"{what}: expected a 4-byte float")
    number: float = struct.unpack("<f", value.to_bytes(4, "little"))[0]   # type: ignore[union-attr]
    return number
