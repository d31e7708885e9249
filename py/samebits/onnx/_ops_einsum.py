"""Einsum, as the exporters emit it: one operand permuted, or two operands
contracted as one batched matrix product.

Two operands A and B: each output letter found in both is a batch axis, one
found in A only a row axis, in B only a column axis; a letter of both that
the output lacks is contracted. A is permuted to (batch, rows, contracted)
and B to (batch, contracted, columns), both flattened to three dimensions,
multiplied by samebits.matmul, and the result unflattened and permuted to
the output's order. So in exact mode every output is the matrix product's
serial sum over the contracted letters, flattened in the order they appear
in A's subscript (docs/onnx.md). A letter repeated within an operand
(a diagonal), a letter summed out of one operand alone, and three or more
operands are refused.
"""
from __future__ import annotations

from typing import Optional

from . import _values as V
from ._ops_shape import _permuted, _reshape_value, expand_value
from ._registry import Inputs, Kernel, NodeContext, need_floats, op
from ._values import Floats, Value

import samebits as _sb

_ELLIPSIS_LETTERS = [chr(0x391 + i) for i in range(24)]   # never in a subscript


def _parse(equation: str, ctx: NodeContext) -> tuple[list[str], Optional[str]]:
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs, out = eq, None
    terms = lhs.split(",")
    for t in terms + ([out] if out is not None else []):
        body = t.replace("...", "")
        if "." in body or not all(c.isalpha() and c.isascii() for c in body):
            raise ctx.error(f"equation {equation!r}: subscript {t!r} is not letters and '...'")
        if len(set(body)) != len(body):
            raise ctx.error(f"equation {equation!r}: a repeated letter in {t!r} (a diagonal) "
                            f"is not supported")
    if len(terms) not in (1, 2):
        raise ctx.error(f"equation {equation!r}: {len(terms)} operands (1 or 2 are supported)")
    return terms, out


def _letters(term: str, rank: int, ctx: NodeContext) -> list[str]:
    """The term's letters with '...' expanded for an operand of this rank
    (ellipsis axes named from the right, so they align as in broadcasting)."""
    if "..." not in term:
        if len(term) != rank:
            raise ValueError(f"{ctx.where}: subscript {term!r} does not fit an operand of "
                             f"rank {rank}")
        return list(term)
    head, tail = term.split("...")
    extra = rank - len(head) - len(tail)
    if extra < 0:
        raise ValueError(f"{ctx.where}: subscript {term!r} does not fit an operand of rank {rank}")
    return list(head) + _ELLIPSIS_LETTERS[len(_ELLIPSIS_LETTERS) - extra:] + list(tail)


def _implicit_output(letter_lists: list[list[str]]) -> list[str]:
    """numpy's implicit output: ellipsis axes, then letters seen once, sorted."""
    counts: dict[str, int] = {}
    for letters in letter_lists:
        for c in letters:
            counts[c] = counts.get(c, 0) + 1
    ellipsis = [c for c in _ELLIPSIS_LETTERS if c in counts]
    return ellipsis + sorted(c for c, n in counts.items() if n == 1 and c not in ellipsis)


@op("Einsum")
def _einsum(ctx: NodeContext) -> Kernel:
    equation = ctx.str("equation")
    terms, out_term = _parse(equation, ctx)

    def run(inputs: Inputs) -> list[Value]:
        xs = [need_floats(v, ctx, f"input {i}") for i, v in enumerate(inputs)]
        if len(xs) != len(terms):
            raise ValueError(f"{ctx.where}: equation {equation!r} needs {len(terms)} inputs, "
                             f"got {len(xs)}")
        letters = [_letters(t, len(x.shape), ctx) for t, x in zip(terms, xs)]
        if out_term is None:
            out = _implicit_output(letters)
        elif "..." in out_term:
            head, tail = out_term.split("...")
            seen = {c for ls in letters for c in ls}
            out = list(head) + [c for c in _ELLIPSIS_LETTERS if c in seen] + list(tail)
        else:
            out = list(out_term)
        sizes: dict[str, int] = {}
        for x, ls in zip(xs, letters):
            for c, d in zip(ls, x.shape):
                if sizes.get(c, 1) not in (1, d) and d != 1:
                    raise ValueError(f"{ctx.where}: axis {c!r} has sizes {sizes[c]} and {d}")
                sizes[c] = max(sizes.get(c, 1), d)
        for c in out:
            if c not in sizes:
                raise ValueError(f"{ctx.where}: output letter {c!r} is in no input")
        if len(xs) == 1:
            return [_one_operand(xs[0], letters[0], out, ctx)]
        return [_two_operands(xs[0], letters[0], xs[1], letters[1], out, sizes, ctx)]
    return run


def _one_operand(x: Floats, letters: list[str], out: list[str], ctx: NodeContext) -> Floats:
    if sorted(out) != sorted(letters):
        raise ValueError(f"{ctx.where}: one-operand Einsum must keep every axis (a "
                         f"permutation); {''.join(letters)} -> {''.join(out)} sums one")
    perm = [letters.index(c) for c in out]
    shape = tuple(x.shape[p] for p in perm)
    return _permuted(x, x.shape, perm, shape, ctx)


def _broadcast_to(x: Floats, letters: list[str], sizes: dict[str, int],
                  ctx: NodeContext) -> Floats:
    target = tuple(sizes[c] for c in letters)
    return x if tuple(x.shape) == target else expand_value(x, target, ctx)


def _two_operands(a: Floats, la: list[str], b: Floats, lb: list[str], out: list[str],
                  sizes: dict[str, int], ctx: NodeContext) -> Floats:
    for c in la + lb:
        if c not in out and not (c in la and c in lb):
            raise ValueError(f"{ctx.where}: letter {c!r} is summed out of one operand alone "
                             f"(not supported)")
    batch = [c for c in out if c in la and c in lb]
    rows = [c for c in out if c in la and c not in lb]
    cols = [c for c in out if c in lb and c not in la]
    contracted = [c for c in la if c in lb and c not in out]
    a = _broadcast_to(a, la, sizes, ctx)
    b = _broadcast_to(b, lb, sizes, ctx)
    nb, m = V.size_of([sizes[c] for c in batch]), V.size_of([sizes[c] for c in rows])
    k, n = V.size_of([sizes[c] for c in contracted]), V.size_of([sizes[c] for c in cols])
    a3 = _permuted(a, a.shape, [la.index(c) for c in batch + rows + contracted], (nb, m, k), ctx)
    b3 = _permuted(b, b.shape, [lb.index(c) for c in batch + contracted + cols], (nb, k, n), ctx)
    order = batch + rows + cols
    y_shape = tuple(sizes[c] for c in order)
    out_shape = tuple(sizes[c] for c in out)
    if nb * m * n == 0:
        return Floats(out_shape, None)
    if k == 0:
        return V.full_floats(out_shape, 0.0)
    y = Floats.wrap(_sb.matmul(a3.data, b3.data, mode=ctx.mode, threads=ctx.threads))
    return _permuted(_reshape_value(y, y_shape), y_shape, [order.index(c) for c in out],
                     out_shape, ctx)
