"""The recurrent layers LSTM and GRU, with ONNX's default activations.

Each is a loop of samebits kernels over the time steps, so exact mode is
exact by construction; the order of operations is written down in
docs/onnx.md. The input projection of every time step is one `linear` with
the input bias (X W^T + Wb, each sum serial, then one add); each step then
runs one `linear` of the previous hidden state (H R^T + Rb) and float32
elementwise operations. Weights are packed once at load.

Refused at load: non-default activations, `clip`, LSTM's peepholes and
`input_forget`, weights that are not constants. A `sequence_lens` input is
accepted when every sequence has the full length.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, cast

from . import _model as M
from . import _values as V
from ._ops_shape import _permuted, slice_value
from ._registry import Builder, Inputs, Kernel, NodeContext, need_floats, need_ints, op
from ._values import Floats, Value

import samebits as _sb

_DEFAULT_ACTIVATIONS = {"LSTM": ["sigmoid", "tanh", "tanh"], "GRU": ["sigmoid", "tanh"]}
_GATES = {"LSTM": 4, "GRU": 3}


class _Kernels:
    """samebits calls on Floats with the node's mode and threads."""

    def __init__(self, ctx: NodeContext) -> None:
        self.kw: dict[str, Any] = {"mode": ctx.mode, "threads": ctx.threads}
        self.ctx = ctx

    def linear(self, x: Floats, packed: Any, bias: Optional[Floats]) -> Floats:
        return Floats.wrap(_sb.linear(x.data, packed, None if bias is None else bias.data,
                                      **self.kw))

    def add(self, a: Floats, b: Floats) -> Floats:
        return Floats.wrap(_sb.add(a.data, b.data, **self.kw))

    def mul(self, a: Floats, b: Floats) -> Floats:
        return Floats.wrap(_sb.mul(a.data, b.data, **self.kw))

    def one_minus(self, a: Floats) -> Floats:
        return Floats.wrap(_sb.sub(1.0, a.data, **self.kw))

    def sigmoid(self, a: Floats) -> Floats:
        return Floats.wrap(_sb.sigmoid(a.data, **self.kw))

    def tanh(self, a: Floats) -> Floats:
        return Floats.wrap(_sb.tanh(a.data, **self.kw))

    def pieces(self, a: Floats, count: int) -> list[Floats]:
        """a (batch, count * H) cut into `count` (batch, H) parts."""
        return [Floats.wrap(p) for p in _sb.split(a.data, a.shape[1] // count, 1,
                                                  threads=self.ctx.threads)]

    def rows(self, a: Floats, first: int, count: int) -> Floats:
        """a[first:first + count] along the first axis (a copy)."""
        return slice_value(a, [first] + [0] * (len(a.shape) - 1),
                           [count] + list(a.shape[1:]), [1] * len(a.shape), self.ctx)

    def stack(self, parts: list[Floats], axis: int) -> Floats:
        """Parts of equal shape joined along a new axis."""
        shape = parts[0].shape
        views = [V.reshape(p, shape[:axis] + (1,) + shape[axis:]) for p in parts]
        return Floats.wrap(_sb.concatenate([v.data for v in views], axis=axis,
                                           threads=self.ctx.threads))


def _direction_slices(ctx: NodeContext, t: Floats, dirs: int, rows: int, what: str,
                      first: int = 0) -> list[Floats]:
    """t[d, first:first + rows] for each direction d, as 2-D (or 1-D) tensors."""
    if t.shape[0] != dirs:
        raise ctx.error(f"{what} {t.shape} does not have {dirs} directions")
    out = []
    for d in range(dirs):
        if len(t.shape) == 3:
            s = slice_value(t, [d, first, 0], [1, rows, t.shape[2]], [1, 1, 1], ctx)
            out.append(V.reshape(s, (rows, t.shape[2])))
        else:
            s = slice_value(t, [d, first], [1, rows], [1, 1], ctx)
            out.append(V.reshape(s, (rows,)))
    return out


# One direction's weights by role: packed W and R (PackedMatrix), their biases
# (Floats or None).
_Pack = dict[str, Any]
_State = tuple[Floats, Optional[Floats]]   # (h, c); c is None for GRU


def _recurrent(kind: str) -> Builder:
    def build(ctx: NodeContext) -> Kernel:
        gates = _GATES[kind]
        hidden = ctx.int("hidden_size", None)
        direction = ctx.str("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ctx.error(f"direction {direction!r} is not forward, reverse or bidirectional")
        dirs = 2 if direction == "bidirectional" else 1
        layout = ctx.int("layout", 0) if ctx.opset >= 14 else 0
        if layout not in (0, 1):
            raise ctx.error(f"layout={layout} must be 0 or 1")
        acts = ctx.attr("activations", M.A_STRINGS, None)
        if acts is not None:
            names = [a.decode() if isinstance(a, bytes) else str(a) for a in acts]
            if [a.lower() for a in names] != _DEFAULT_ACTIVATIONS[kind] * dirs:
                raise ctx.error(f"activations {names} are not supported (only the defaults)")
        for name in ("clip", "activation_alpha", "activation_beta"):
            if ctx.has(name):
                raise ctx.error(f"attribute {name!r} is not supported")
        if kind == "LSTM":
            if ctx.int("input_forget", 0) != 0:
                raise ctx.error("input_forget=1 is not supported")
            if ctx.has_input(7):
                raise ctx.error("peephole weights (input P) are not supported")
        reset_first = ctx.int("linear_before_reset", 0) if kind == "GRU" else 0
        w, r = ctx.const(1), ctx.const(2)
        if w is None or r is None:
            raise ctx.error("the weights W and R must be constants")
        w, r = need_floats(w, ctx, "W"), need_floats(r, ctx, "R")
        h = hidden if hidden is not None else r.shape[-1]
        if w.shape[:2] != (dirs, gates * h) or r.shape != (dirs, gates * h, h):
            raise ctx.error(f"W {w.shape} and R {r.shape} do not fit {dirs} direction(s) of "
                            f"{gates} gates with hidden_size {h}")
        b = ctx.const(3) if ctx.has_input(3) else None
        if ctx.has_input(3) and b is None:
            raise ctx.error("the bias B must be a constant")
        b = need_floats(b, ctx, "B") if b is not None else None
        if b is not None and b.shape != (dirs, 2 * gates * h):
            raise ctx.error(f"B {b.shape} does not fit {dirs} direction(s) of {gates} gates")
        for i in (1, 2, 3):
            if ctx.has_input(i):
                ctx.consume(i)
        # per direction: packed W, the input bias, packed R (for GRU without
        # linear_before_reset: R's z and r rows, and its h rows apart), R's bias
        packs: list[_Pack] = []
        no_bias: list[Optional[Floats]] = [None] * dirs
        w_biases = _direction_slices(ctx, b, dirs, gates * h, "B") if b is not None else no_bias
        r_biases = _direction_slices(ctx, b, dirs, gates * h, "B", gates * h) \
            if b is not None else no_bias
        for wd, rd, wb, rb in zip(_direction_slices(ctx, w, dirs, gates * h, "W"),
                                  _direction_slices(ctx, r, dirs, gates * h, "R"),
                                  w_biases, r_biases):
            entry: _Pack = {"W": _sb.pack_linear(wd.data), "Wb": wb}
            if kind == "GRU" and not reset_first:
                entry["Rzr"] = _sb.pack_linear(slice_value(rd, [0, 0], [2 * h, h], [1, 1],
                                                           ctx).data)
                entry["Rh"] = _sb.pack_linear(slice_value(rd, [2 * h, 0], [h, h], [1, 1],
                                                          ctx).data)
                entry["Rzr_b"] = None if rb is None else slice_value(rb, [0], [2 * h], [1], ctx)
                entry["Rh_b"] = None if rb is None else slice_value(rb, [2 * h], [h], [1], ctx)
            else:
                entry["R"], entry["Rb"] = _sb.pack_linear(rd.data), rb
            packs.append(entry)
        k = _Kernels(ctx)

        def step_lstm(p: _Pack, gx_t: Floats, state: _State) -> _State:
            hp, cp = state[0], cast(Floats, state[1])   # an LSTM state has c
            g = k.add(gx_t, k.linear(hp, p["R"], p["Rb"]))
            i, o, f, c = k.pieces(g, 4)
            c = k.add(k.mul(k.sigmoid(f), cp), k.mul(k.sigmoid(i), k.tanh(c)))
            return k.mul(k.sigmoid(o), k.tanh(c)), c

        def step_gru(p: _Pack, gx_t: Floats, state: _State) -> _State:
            hp = state[0]
            zx, rx, nx = k.pieces(gx_t, 3)
            if reset_first:
                zh, rh, nh = k.pieces(k.linear(hp, p["R"], p["Rb"]), 3)
                z, rg = k.sigmoid(k.add(zx, zh)), k.sigmoid(k.add(rx, rh))
                n = k.tanh(k.add(nx, k.mul(rg, nh)))
            else:
                zh, rh = k.pieces(k.linear(hp, p["Rzr"], p["Rzr_b"]), 2)
                z, rg = k.sigmoid(k.add(zx, zh)), k.sigmoid(k.add(rx, rh))
                n = k.tanh(k.add(nx, k.linear(k.mul(rg, hp), p["Rh"], p["Rh_b"])))
            return k.add(k.mul(k.one_minus(z), n), k.mul(z, hp)), None

        step = step_lstm if kind == "LSTM" else step_gru

        def initial(inputs: Inputs, i: int, batch: int, what: str) -> list[Floats]:
            if len(inputs) > i and inputs[i] is not None:
                t = need_floats(inputs[i], ctx, what)
                if layout == 1:
                    t = _permuted(t, t.shape, [1, 0, 2], (t.shape[1], t.shape[0], t.shape[2]), ctx)
                if t.shape != (dirs, batch, h):
                    raise ValueError(f"{ctx.where}: {what} {t.shape} is not {(dirs, batch, h)}")
                return [V.reshape(k.rows(t, d, 1), (batch, h)) for d in range(dirs)]
            return [V.full_floats((batch, h), 0.0) for _ in range(dirs)]

        def run(inputs: Inputs) -> Sequence[Value]:
            x = need_floats(inputs[0], ctx, "X")
            if len(x.shape) != 3:
                raise ValueError(f"{ctx.where}: X must be 3-D, got {x.shape}")
            if layout == 1:
                x = _permuted(x, x.shape, [1, 0, 2], (x.shape[1], x.shape[0], x.shape[2]), ctx)
            seq, batch, size = x.shape
            if seq == 0 or batch == 0:
                raise ValueError(f"{ctx.where}: empty input {x.shape}")
            if size != w.shape[2]:
                raise ValueError(f"{ctx.where}: X has {size} features, W {w.shape} expects "
                                 f"{w.shape[2]}")
            if len(inputs) > 4 and inputs[4] is not None:
                lens = need_ints(inputs[4], ctx, "sequence_lens").values
                if any(v != seq for v in lens):
                    raise ValueError(f"{ctx.where}: sequence_lens {lens} shorter than the "
                                     f"{seq} steps are not supported")
            h0 = initial(inputs, 5, batch, "initial_h")
            c0: Sequence[Optional[Floats]] = initial(inputs, 6, batch, "initial_c") \
                if kind == "LSTM" else [None] * dirs
            ys: list[Floats] = []
            hs: list[Floats] = []
            cs: list[Optional[Floats]] = []
            for d, p in enumerate(packs):
                gx = k.linear(V.reshape(x, (seq * batch, size)), p["W"], p["Wb"])
                gx = V.reshape(gx, (seq, batch, gates * h))
                backwards = direction == "reverse" or d == 1
                state: _State = (h0[d], c0[d])
                outs: list[Any] = [None] * seq
                for t in (range(seq - 1, -1, -1) if backwards else range(seq)):
                    state = step(p, V.reshape(k.rows(gx, t, 1), (batch, gates * h)), state)
                    outs[t] = state[0]
                ys.append(k.stack(outs, 0))                  # (seq, batch, H)
                hs.append(state[0])
                cs.append(state[1])
            y = k.stack(ys, 1)                               # (seq, dirs, batch, H)
            y_h = k.stack(hs, 0)                             # (dirs, batch, H)
            y_c = k.stack(cast("list[Floats]", cs), 0) if kind == "LSTM" else None
            if layout == 1:
                y = _permuted(y, y.shape, [2, 0, 1, 3], (batch, seq, dirs, h), ctx)
                y_h = _permuted(y_h, y_h.shape, [1, 0, 2], (batch, dirs, h), ctx)
                if y_c is not None:
                    y_c = _permuted(y_c, y_c.shape, [1, 0, 2], (batch, dirs, h), ctx)
            return [y, y_h] + ([cast(Floats, y_c)] if kind == "LSTM" else [])
        return run
    return build


op("LSTM")(_recurrent("LSTM"))
op("GRU")(_recurrent("GRU"))
