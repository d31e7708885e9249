"""samebits.explain: what a matmul, linear or conv2d call would run, without
running it (the plan of plan_report.py, asked of the C planner)."""
from __future__ import annotations

import inspect
from typing import Any, Callable

from . import conv as _conv, linear as _linear, matmul as _matmul, products as _products
from .plan_report import Plan as Plan, plan_conv2d


def explain(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Plan:
    """What ``function(*args, **kwargs)`` would run, without running it.

    function is ``samebits.matmul``, ``samebits.linear`` or
    ``samebits.conv2d``, with the arguments of the call (they are checked as
    the call checks them, and raise the same errors). Returns a Plan; print
    it for one line that says the route, tile, chunk count, threads and
    estimated work. The plan depends on the shapes, the path, the mode and the
    thread cap only.
    """
    preparers: dict[Callable[..., Any], Callable[..., Any]] = {
        _matmul.matmul: _products.prepare_matmul, _linear.linear: _products.prepare_linear,
        _conv.conv2d: _conv.prepare}
    prepare = preparers.get(function)
    if prepare is None:
        raise TypeError(f"explain: function must be samebits.matmul, samebits.linear or "
                        f"samebits.conv2d, got {function!r}")
    bound = inspect.signature(function).bind(*args, **kwargs)   # the call's own TypeErrors
    bound.apply_defaults()
    prepared = prepare(**bound.arguments)
    if function is _conv.conv2d:
        return plan_conv2d(prepared[0], prepared[1])
    return _products.plan_report(prepared)
