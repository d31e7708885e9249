"""The shared helper for ONNX test cases: a model from nodes, and its runs
wherever a user may run it (both modes, every path this machine has, 1 and
2 threads). Tests of the graph runtime build their cases through it."""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import samebits
import samebits.onnx as so

FLOAT = TensorProto.FLOAT


def model(nodes: Sequence, inputs: Sequence, outputs: Sequence, inits: Iterable = (),
          opset: int = 17, ir_version: int = 8, name: str = "g") -> bytes:
    """The serialized model of one graph of `nodes` (helper.make_node's), its
    inputs and outputs (value infos) and initializers, at `opset`."""
    g = helper.make_graph(list(nodes), name, list(inputs), list(outputs), list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir_version
    data: bytes = m.SerializeToString()
    return data


def value(name: str, dtype: int = FLOAT, shape: Sequence | None = None):
    """A graph input's or output's value info (shape None: not declared)."""
    return helper.make_tensor_value_info(name, dtype, None if shape is None else list(shape))


def run_everywhere(data: bytes, feeds: dict, modes: Sequence[str] = ("exact", "fast"),
                   threads: Sequence[int] = (1, 2)) -> Iterator[tuple[str, dict]]:
    """(what, outputs) for each mode, every path this machine runs and each
    thread count: `what` names the run for an assertion's message."""
    for mode in modes:
        for path in samebits.paths():
            for n in threads:
                with samebits.use_path(path):
                    s = so.load(data, mode=mode, threads=n)
                yield f"{mode} {path} threads={n}", s.run(feeds)


def bits(x) -> np.ndarray:
    """float32 values as their bit patterns (for bit-for-bit comparisons)."""
    return np.ascontiguousarray(x, np.float32).view(np.uint32)


def graph_model(nodes: Sequence, inputs: dict, outputs: dict, inits: dict | None = None,
                opset: int = 17, ir_version: int | None = None) -> bytes:
    """model() from dicts: inputs and outputs name -> (element type, shape or
    None), inits name -> array; IR version ir_version, else 8 (10 from
    opset 21). (The
    graph's name, "t", is part of the bytes the Python runner's record keys.)"""
    return model(nodes, [value(n, t, s) for n, (t, s) in inputs.items()],
                 [value(n, t, s) for n, (t, s) in outputs.items()],
                 [numpy_helper.from_array(np.asarray(v), n) for n, v in (inits or {}).items()],
                 opset=opset, name="t",
                 ir_version=ir_version or (8 if opset < 21 else 10))


def normal_floats(rng: np.random.Generator, shape: Sequence[int], scale: float = 1.0) -> np.ndarray:
    """float32 draws of a standard normal times scale (a test's own rng, so
    that its inputs are its own whatever else runs)."""
    return (rng.standard_normal(tuple(shape)) * scale).astype(np.float32)
