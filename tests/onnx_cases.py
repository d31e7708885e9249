"""The shared helper for ONNX test cases: a model from nodes, and its runs
wherever a user may run it (both modes, every path this machine has, 1 and
2 threads). Tests of the graph runtime build their cases through it."""
from __future__ import annotations

from typing import Iterable, Iterator, Sequence

import numpy as np
from onnx import TensorProto, helper

import samebits
import samebits.onnx as so

FLOAT = TensorProto.FLOAT


def model(nodes: Sequence, inputs: Sequence, outputs: Sequence, inits: Iterable = (),
          opset: int = 17, ir_version: int = 8) -> bytes:
    """The serialized model of one graph of `nodes` (helper.make_node's), its
    inputs and outputs (value infos) and initializers, at `opset`."""
    g = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), list(inits))
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
