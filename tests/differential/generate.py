"""Random valid ONNX graphs for the differential tester (docs/differential.md).

A graph is grown node by node from one or two graph inputs. Each new node
takes its inputs from the values made so far, most often the newest (so
operators land on intermediates), sometimes a value that already has a
reader (several consumers), sometimes a graph input; constants are made
as initializers of broadcastable shapes. Every value that nothing reads
becomes a graph output, and so do some intermediates that are read too.

Each value carries what the builders need to keep the graph valid and the
comparison meaningful:

- its element type and shape, and which dimensions derive from the
  symbolic batch dimension ``N`` (those stay 1 in constants and are never
  reshaped away), so that one session runs at two batch sizes;
- ``exact``: every implementation computes it bit for bit alike (views,
  IEEE-exact arithmetic on exact values). Operators that jump on tiny
  differences (Floor, Ceil, Round, comparisons, ArgMax, Cast to an integer
  type) only take exact values, so a last-bit difference upstream can never
  become a difference of 1;
- ``bounded``: its magnitude stays small (no Div, Exp, Pow, Reciprocal
  upstream), so a Cast to an integer type is defined.
- ``family``: the operator families upstream, which set its tolerance
  (compare.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np
from onnx import TensorProto, helper, numpy_helper

ONNX_TYPE = {"float32": TensorProto.FLOAT, "int64": TensorProto.INT64,
             "int32": TensorProto.INT32, "int8": TensorProto.INT8,
             "uint8": TensorProto.UINT8, "bool": TensorProto.BOOL}
OPSETS = [11, 13, 17, 18, 21, 23, 27]


@dataclass
class Value:
    name: str
    dtype: str
    shape: list[int]
    sym: list[bool]                # dimension derived from the batch dimension N
    exact: bool = True
    bounded: bool = True
    families: frozenset = frozenset()
    readers: int = 0


@dataclass
class Graph:
    rng: np.random.Generator
    opset: int
    batch: int                     # N at generation; 0: no symbolic dimension
    values: list[Value] = field(default_factory=list)
    nodes: list = field(default_factory=list)
    inits: list = field(default_factory=list)
    inputs: list[Value] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)
    count: int = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def add_value(self, dtype: str, shape, sym, exact=True, bounded=True, families=()) -> Value:
        v = Value(self.fresh("v"), dtype, list(shape), list(sym), exact, bounded,
                  frozenset(families))
        self.values.append(v)
        return v

    def const(self, array: np.ndarray, stem: str = "c") -> str:
        name = self.fresh(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def pick(self, ok: Callable[[Value], bool]) -> Optional[Value]:
        """A value for a new node's input: the newest that fits most often,
        else any (graph inputs and values with readers included)."""
        fits = [v for v in self.values if ok(v)]
        if not fits:
            return None
        if self.rng.random() < 0.6:
            return fits[-1]
        return fits[int(self.rng.integers(len(fits)))]

    def node(self, op: str, ins: list[str], outs: list[Value], **attrs) -> None:
        for name in ins:
            for v in self.values:
                if v.name == name:
                    v.readers += 1
        self.nodes.append(helper.make_node(op, ins, [o.name for o in outs], **attrs))
        self.ops.append(op)


def is_float(v: Value) -> bool:
    return v.dtype == "float32"


def derived(x: Value, g: Graph, dtype=None, shape=None, sym=None, *, exact=None, bounded=None,
            family: Optional[str] = None) -> Value:
    """A new value made from x (and the flags of its other inputs, merged by
    the caller): exact and bounded only if x is, families gain `family`."""
    fam = set(x.families) | ({family} if family else set())
    return g.add_value(dtype or x.dtype, x.shape if shape is None else shape,
                       x.sym if sym is None else sym,
                       x.exact if exact is None else (exact and x.exact),
                       x.bounded if bounded is None else (bounded and x.bounded), fam)


def merge(out: Value, *others: Value) -> Value:
    for o in others:
        out.exact = out.exact and o.exact
        out.bounded = out.bounded and o.bounded
        out.families = out.families | o.families
    return out


def rand_floats(rng: np.random.Generator, shape, scale=2.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---- broadcasting ---------------------------------------------------------------------

def broadcast_shape(rng: np.random.Generator, x: Value) -> tuple[list[int], list[bool]]:
    """A shape that broadcasts against x to x's shape: some dimensions 1,
    some leading ones dropped; dimensions from N are always 1 or dropped."""
    r = len(x.shape)
    drop = int(rng.integers(0, r + 1)) if r else 0
    shape, sym = [], []
    for d in range(drop, r):
        keep = not x.sym[d] and rng.random() < 0.6
        shape.append(x.shape[d] if keep else 1)
        sym.append(False)
    return shape, sym


def other_operand(g: Graph, x: Value, dtype: str) -> tuple[str, Value]:
    """The second operand of a binary node: another value of x's shape
    (often x itself: the same value read twice), a graph input, or a
    constant that broadcasts."""
    rng = g.rng
    same = [v for v in g.values if v.dtype == dtype and v.shape == x.shape and v.sym == x.sym]
    u = rng.random()
    if same and u < 0.45:
        v = same[int(rng.integers(len(same)))]
        return v.name, v
    shape, sym = broadcast_shape(rng, x)
    if dtype == "float32":
        arr = rand_floats(rng, shape)
        if rng.random() < 0.3:   # exactly representable small values: exact products
            arr = np.round(arr * 2) / 2
    elif dtype == "bool":
        arr = rng.random(shape) < 0.5
    else:
        arr = rng.integers(-5, 6, shape).astype(dtype)
    cv = Value("", dtype, shape, sym, True, True, frozenset())
    return g.const(arr), cv


# ---- whole graphs -----------------------------------------------------------------------

# special values (large ones with headroom: documented formulas such as
# batch normalization's (x - mean) * r may overflow in an intermediate near
# FLT_MAX where another association does not; see docs/differential.md)
SPECIALS = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 1e20, 0.5, -2.5],
                    np.float32)


@dataclass
class Case:
    """One generated graph, its feeds at one or two batch sizes, and what it holds."""
    seed: int
    model: object                  # onnx.ModelProto
    feeds: list[dict]              # one dict per batch size run in one session
    ops: list[str]
    families: dict                 # output name -> frozenset of families upstream
    exact_outputs: set


def _feed(rng: np.random.Generator, v: Value, batch: int, specials: bool) -> np.ndarray:
    shape = [batch if s else d for d, s in zip(v.shape, v.sym)]
    if v.dtype == "float32":
        x = rand_floats(rng, shape, 1.5)
        if rng.random() < 0.3:      # values that are halves: ties for Round, exact products
            x = np.round(x * 2) / 2
        if specials and x.size:
            flat = x.reshape(-1)
            at = rng.integers(0, flat.size, max(1, flat.size // 8))
            flat[at] = rng.choice(SPECIALS, at.size)
        return x.astype(np.float32)
    if v.dtype == "bool":
        return rng.random(shape) < 0.5
    lo, hi = (0, 9) if v.dtype == "uint8" else (-6, 7)
    return rng.integers(lo, hi, shape).astype(v.dtype)


def make_case(seed: int, max_nodes: int = 7) -> Case:
    """The graph of `seed`: 2 to max_nodes nodes (a builder may add more, as
    Shape chains do), always the same for the same seed."""
    from ops import BUILDERS, SINCE
    rng = np.random.default_rng(seed)
    opset = int(rng.choice(OPSETS))
    batch = int(rng.choice([2, 3])) if rng.random() < 0.5 else 0
    g = Graph(rng, opset, batch)
    for i in range(1 + int(rng.random() < 0.4)):
        rank = int(rng.choice([1, 2, 2, 3, 4, 4, 4, 4]))
        dims = [int(rng.choice([1, 2, 3, 4, 5, 7, 8, 17, 33])) for _ in range(rank)]
        if rank == 4:
            dims = [int(rng.integers(1, 3)), int(rng.choice([1, 3, 4, 8])),
                    int(rng.integers(3, 12)), int(rng.integers(3, 12))]
        sym = [bool(batch) and d == 0 and rank >= 2 for d in range(rank)]
        if any(sym):
            dims[0] = batch
        dtype = "float32" if i == 0 or rng.random() < 0.6 else str(
            rng.choice(["int64", "int32", "int8", "uint8", "bool"]))
        v = g.add_value(dtype, dims, sym)
        v.name = f"in{i}"
        g.inputs.append(v)
    want = int(rng.integers(2, max_nodes + 1))
    weights = np.array([w for _, _, w in BUILDERS])
    tries = 0
    while len(g.nodes) < want and tries < 200:
        tries += 1
        builder, op, _ = BUILDERS[int(rng.choice(len(BUILDERS), p=weights / weights.sum()))]
        if SINCE.get(op, 0) <= opset:
            builder(g, op)
    inputs = set(v.name for v in g.inputs)
    made = [v for v in g.values if v.name not in inputs]
    outs = [v for v in made if v.readers == 0]
    outs += [v for v in made if v.readers > 0 and rng.random() < 0.3]
    produced = set()
    for n in g.nodes:
        produced.update(n.output)
    outs = [v for v in outs if v.name in produced]
    if not outs:
        outs = [made[-1]]
    graph = helper.make_graph(
        g.nodes, f"difftest_{seed}",
        [helper.make_tensor_value_info(v.name, ONNX_TYPE[v.dtype],
                                       ["N" if s else d for d, s in zip(v.shape, v.sym)])
         for v in g.inputs],
        [helper.make_tensor_value_info(v.name, ONNX_TYPE[v.dtype],
                                       ["N" if s else d for d, s in zip(v.shape, v.sym)])
         for v in outs],
        g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8 if opset < 21 else 10
    specials = rng.random() < 0.3
    batches = [batch, 5 - batch] if batch else [0]
    feeds = [{v.name: _feed(rng, v, b, specials) for v in g.inputs} for b in batches]
    return Case(seed, model, feeds, list(g.ops), {v.name: v.families for v in outs},
                {v.name for v in outs if v.exact})
