"""The plan of one call as samebits.explain reports it, and SAMEBITS_TRACE=plan.

The C planner (csrc/framework/tiling.c) decides, from the shapes alone, the route, the
register tile, how B reaches the kernels, the chunks of the two phases and how
many threads wake. SAMEBITS_TRACE=plan (read at import) prints the plan of
every matmul, linear and conv2d call to standard error before it runs. The
operations import this module; explain.py imports them (no circle).
"""
from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable

from .._binding import abi as _abi, lib as _lib, paths as _paths

TRACE = os.environ.get("SAMEBITS_TRACE", "").strip().lower() == "plan"


@dataclass(frozen=True)
class Plan:
    """The plan of one call (see docs/design.md for the routes).

    route: "tiles", "panels", "row", "column", "channel lanes", "depthwise",
    "zero-k" or "empty"; b_source: how B reaches the kernels ("prepacked", "packed
    whole", "in place", "per panel", "per strip", "by offsets"; for "depthwise":
    "in place" when the planes are read where they are, "per strip" when each
    plane is stored padded, "per panel" when 16 channels at a time are stored
    pixel by pixel, channels in the vector lanes); tile: the
    register tile (MR, NR) and cache_tile (MC, NC); products: the 2-D products the call
    runs together, each of shape (m, n, k); prepare_chunks and compute_chunks:
    the chunks of the two phases, all products together; threads: how many
    threads the compute phase wakes; waves: how many parallel runs the
    products are split into to bound the workspace; estimated_us: one
    thread's estimated time.
    """
    op: str
    path: str
    mode: str
    route: str
    b_source: str
    tile: tuple[int, int]
    cache_tile: tuple[int, int]
    products: int
    m: int
    n: int
    k: int
    prepare_chunks: int
    compute_chunks: int
    threads: int
    waves: int
    workspace_bytes: int
    estimated_us: float
    pack_a: bool
    a_in_place: bool

    def __str__(self) -> str:
        shape = f"{self.m}x{self.n}x{self.k}"
        what = f"{self.products} product{'s' if self.products != 1 else ''} of {shape} (m x n x k)"
        if self.route == "depthwise":
            what = f"{self.products} planes of {self.m}x{self.n} outputs, {self.k} taps each"
        parts = [f"{self.op} ({self.mode}) on {self.path}: {what}", f"route {self.route}"]
        if self.route in ("tiles", "panels", "row"):
            a = ", A packed first" if self.pack_a else ", A read in place" if self.a_in_place else ""
            parts.append(f"B {self.b_source}{a}")
            parts.append(f"tile {self.tile[0]}x{self.tile[1]}, cache tile "
                         f"{self.cache_tile[0]}x{self.cache_tile[1]}")
        chunks = f"{self.compute_chunks} chunk{'s' if self.compute_chunks != 1 else ''}"
        if self.prepare_chunks:
            chunks = f"{self.prepare_chunks} packing + {chunks}"
        parts += [chunks, f"{self.threads} thread{'s' if self.threads != 1 else ''}"]
        if self.waves > 1:
            parts.append(f"{self.waves} waves")
        parts.append(f"workspace {self.workspace_bytes / 1024:.0f} KiB, estimated "
                     f"{self.estimated_us:.0f} us on one thread")
        return "; ".join(parts)


def plan_from_info(op: str, info: _abi.PlanInfo, mode_code: int) -> Plan:
    return Plan(op=op, path=_paths.ALL_PATHS[info.isa_path],
                mode="exact" if mode_code == _lib.MODE_EXACT else "fast",
                route=_abi.ROUTES.get(info.route, str(info.route)),
                b_source=_abi.B_SOURCES.get(info.b_source, str(info.b_source)),
                tile=(info.mr, info.nr), cache_tile=(info.mc, info.nc), products=info.products,
                m=info.m, n=info.n, k=info.k, prepare_chunks=info.prepare_chunks,
                compute_chunks=info.compute_chunks, threads=info.threads, waves=info.waves,
                workspace_bytes=info.workspace_bytes, estimated_us=info.estimated_ns / 1000.0,
                pack_a=bool(info.pack_a), a_in_place=bool(info.a_in_place))


def plan_conv2d(library: Any, args: _abi.Conv2dArgs) -> Plan:
    info = _abi.PlanInfo()
    status = library.sb_conv2d_plan(ctypes.addressof(args), ctypes.addressof(info))
    _lib.check_status(status, "conv2d")
    return plan_from_info("conv2d", info, args.mode)


def trace(plan: Callable[[], Plan]) -> None:
    """Prints a plan to standard error when SAMEBITS_TRACE=plan."""
    print(f"samebits plan: {plan()}", file=sys.stderr, flush=True)
