"""How an ONNX operator becomes a kernel: one builder per operator type.

A builder runs once per node at load. It reads and checks the node's
attributes through a NodeContext, prepares what can be prepared (constant
inputs converted, weights packed) and returns a kernel: a function from the
node's input values (None for an omitted optional input) to its outputs.
An attribute the builder never read is refused after it returns, so that
nothing a model asks for is silently ignored.
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Optional, Sequence, TypeVar, Union, cast, overload

from .._typing import Mode
from . import _model as M
from ._values import Floats, Ints, Value

# A kernel's inputs: one per node input, None where it is omitted (or a constant
# the kernel consumed); it returns one value per node output.
Inputs = list[Optional[Value]]
Kernel = Callable[[Inputs], Sequence[Value]]
Builder = Callable[["NodeContext"], Kernel]

BUILDERS: dict[str, Builder] = {}
FAST_ONLY: set[str] = set()     # operators with no exact definition (none so far)


from ._errors import UnsupportedModelError as UnsupportedModelError  # noqa: E402  (one class for both runners)


def op(*names: str) -> Callable[[Builder], Builder]:
    """Registers a builder for the given operator types (default domain)."""
    def register(fn: Builder) -> Builder:
        for name in names:
            BUILDERS[name] = fn
        return fn
    return register


_REQUIRED: Any = object()
_D = TypeVar("_D")   # an attribute's default where the model may omit it

_KIND_NAMES = {M.A_FLOAT: "float", M.A_INT: "int", M.A_STRING: "string", M.A_TENSOR: "tensor",
               M.A_GRAPH: "graph", M.A_FLOATS: "floats", M.A_INTS: "ints",
               M.A_STRINGS: "strings", M.A_TENSORS: "tensors", M.A_GRAPHS: "graphs"}


class NodeContext:
    """One node as its builder sees it."""

    def __init__(self, node: M.Node, index: int, opset: int, mode: Mode, threads: Optional[int],
                 constants: dict[str, Value]) -> None:
        self.node = node
        self.index = index
        self.opset = opset
        self.mode = mode
        self.threads = threads
        self._constants = constants
        self._used: set[str] = set()
        self.consumed: set[int] = set()

    @property
    def where(self) -> str:
        name = f" {self.node.name!r}" if self.node.name else ""
        return f"node {self.index}{name} ({self.node.op_type})"

    def error(self, message: str) -> UnsupportedModelError:
        return UnsupportedModelError(f"{self.where}: {message}")

    # ---- attributes -----------------------------------------------------

    def has(self, name: str) -> bool:
        return name in self.node.attributes

    def attr(self, name: str, kind: int, default: Any = _REQUIRED) -> Any:
        """The attribute's value, checked to be of `kind`; `default` when absent."""
        a = self.node.attributes.get(name)
        self._used.add(name)
        if a is None:
            if default is _REQUIRED:
                raise self.error(f"attribute {name!r} is required")
            return default
        if a.type != kind:
            raise self.error(f"attribute {name!r} has type {_KIND_NAMES.get(a.type, a.type)}, "
                             f"expected {_KIND_NAMES[kind]}")
        return a.value

    # The typed readers; `default` (any value, None included) when the
    # attribute is absent. In the class body below, builtins.int, .float and
    # .str are the types: int, float and str name these methods.
    @overload
    def int(self, name: str) -> builtins.int: ...
    @overload
    def int(self, name: str, default: _D) -> builtins.int | _D: ...

    def int(self, name: str, default: Any = _REQUIRED) -> Any:
        return self.attr(name, M.A_INT, default)

    @overload
    def ints(self, name: str) -> list[builtins.int]: ...
    @overload
    def ints(self, name: str, default: _D) -> list[builtins.int] | _D: ...

    def ints(self, name: str, default: Any = _REQUIRED) -> Any:
        v = self.attr(name, M.A_INTS, default)
        return list(v) if isinstance(v, list) else v

    @overload
    def float(self, name: str) -> builtins.float: ...
    @overload
    def float(self, name: str, default: _D) -> builtins.float | _D: ...

    def float(self, name: str, default: Any = _REQUIRED) -> Any:
        return self.attr(name, M.A_FLOAT, default)

    @overload
    def str(self, name: builtins.str) -> builtins.str: ...
    @overload
    def str(self, name: builtins.str, default: _D) -> builtins.str | _D: ...

    def str(self, name: builtins.str, default: Any = _REQUIRED) -> Any:
        v = self.attr(name, M.A_STRING, default)
        return v.decode("utf-8") if isinstance(v, bytes) else v

    def ignore(self, *names: builtins.str) -> None:
        """Attributes that do not change an inference result (documented per op)."""
        self._used.update(names)

    def finish(self) -> None:
        unused = [n for n in self.node.attributes if n not in self._used]
        if unused:
            raise self.error(f"attribute {unused[0]!r} is not supported")

    # ---- inputs and outputs ---------------------------------------------

    def input_count(self) -> builtins.int:
        """Inputs given, trailing omitted ones ('' names) not counted."""
        names = list(self.node.inputs)
        while names and names[-1] == "":
            names.pop()
        return len(names)

    def has_input(self, i: builtins.int) -> bool:
        return i < len(self.node.inputs) and self.node.inputs[i] != ""

    def const(self, i: builtins.int) -> Optional[Value]:
        """Input i's value when it is a constant (initializer or folded), else None."""
        if not self.has_input(i):
            return None
        return self._constants.get(self.node.inputs[i])

    def consume(self, i: builtins.int) -> None:
        """The kernel holds everything it needs of constant input i (packed
        weights): the run passes None there, and the session may free the
        constant once no other node reads it."""
        self.consumed.add(i)

    def constant(self, name: builtins.str) -> Optional[Value]:
        """A constant by name (an initializer or a folded value)."""
        return self._constants.get(name)

    def const_ints(self, i: builtins.int, what: builtins.str) -> Optional[list[builtins.int]]:
        v = self.const(i)
        if v is None:
            return None
        if not isinstance(v, Ints):
            raise self.error(f"input {what} must be an integer tensor")
        return list(v.values)

    def only_first_output(self, what: builtins.str = "") -> None:
        extra = [name for name in self.node.outputs[1:] if name]
        if extra:
            raise self.error(f"output {extra[0]!r} ({what or 'beyond the first'}) is not "
                             f"supported")


def required(v: Optional[Value]) -> Value:
    """A required input as a kernel reads it; a ValueError if the model left
    it out (an empty name in the node's inputs), which the session prefixes
    with the node's name and operator."""
    if v is None:
        raise ValueError("a required input is missing (its name in the node's inputs is empty)")
    return v


def need_floats(v: Optional[Value], ctx: NodeContext, what: str) -> Floats:
    if isinstance(v, Floats):
        return v
    if v is None:
        raise ValueError(f"{ctx.where}: input {what} is missing")
    raise TypeError(f"{ctx.where}: input {what} must be float32, got "
                    f"{M.DTYPE_NAMES.get(v.dtype, v.dtype)}")


def need_ints(v: Union[Value, float, None], ctx: NodeContext, what: str) -> Ints:
    # (a float: Clip's bound as an attribute before opset 11, refused on an integer tensor)
    if isinstance(v, Ints):
        return v
    if v is None:
        raise ValueError(f"{ctx.where}: input {what} is missing")
    raise TypeError(f"{ctx.where}: input {what} must be an integer tensor, got float32")


def axis_index(axis: int, rank: int, ctx: NodeContext, what: str = "axis") -> int:
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"{ctx.where}: {what} {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0


def normalize_axes(axes: Sequence[int], rank: int, ctx: NodeContext, what: str = "axes"
                   ) -> list[int]:
    out = [axis_index(int(a), rank, ctx, what) for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{ctx.where}: {what} {list(axes)} repeats an axis")
    return out
