"""The portable test-value generator (docs/test-values.md).

The C library fills buffers fast (sb_fill_test_values); the pure-Python
functions here are the definition's second implementation, which the tests
compare against the C one.
"""
from __future__ import annotations

import ctypes
import struct

from ._binding.lib import lib

MASK = 0xFFFFFFFF
SPECIAL_BITS = (0x7FC00000, 0xFFC00001, 0x7F800000, 0xFF800000,
                0x00000000, 0x80000000, 0x00000001, 0x80234567)


def mix32(x: int) -> int:
    """The 32-bit integer mixer every draw is made from."""
    x &= MASK
    x ^= x >> 16
    x = (x * 0x7FEB352D) & MASK
    x ^= x >> 15
    x = (x * 0x846CA68B) & MASK
    x ^= x >> 16
    return x


def value_bits(index: int, seed: int) -> int:
    """binary32 bits of test value `index` of stream `seed`, before specials."""
    u = mix32(mix32(index) ^ seed)
    x = float((u >> 8) - 0x800000) * 2.0 ** -23
    if (u & 0xFF) < 8:
        x *= 2.0 ** -64
    bits: int = struct.unpack("<I", struct.pack("<f", x))[0]
    return bits


def special_positions(count: int, seed: int, nspecial: int) -> list[tuple[int, int]]:
    """(position, bits) of the special values, in the order they are written."""
    return [(mix32(seed + 0x9E3779B9 * (s + 1)) % count, SPECIAL_BITS[s % 8])
            for s in range(nspecial)] if count else []


def reference_bits(count: int, seed: int, nspecial: int) -> list[int]:
    """The whole filled buffer as binary32 bit patterns, computed in Python."""
    bits = [value_bits(i, seed) for i in range(count)]
    for pos, special in special_positions(count, seed, nspecial):
        bits[pos] = special
    return bits


def fill(buffer: ctypes.Array[ctypes.c_float], seed: int, nspecial: int) -> None:
    """Fills a ctypes float array with the test values (C implementation)."""
    lib.sb_fill_test_values(ctypes.addressof(buffer), len(buffer), seed & MASK, nspecial)


def float_buffer(count: int, seed: int, nspecial: int) -> ctypes.Array[ctypes.c_float]:
    buffer = (ctypes.c_float * max(count, 1))()
    fill(buffer, seed, nspecial)
    return buffer
