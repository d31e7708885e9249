"""Independent references for the convolution tests.

`conv_oracle` writes the exact-mode definition with numpy float32 operations
(one rounded product and one rounded add per tap, taps in (c, ky, kx) order,
padding as products with +0); `conv_naive` calls the C library's plain-loop
reference; `conv_float64` is the float64 sum with the Higham error bound.
"""
from __future__ import annotations

import ctypes

import numpy as np

from samebits._binding import abi as _abi, lib as _lib
from samebits._ops.products import activation_code


def _geometry(x, w, stride, padding, dilation):
    n, c, h, width = x.shape
    cout, cin_g, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dilation
    top, bottom, left, right = padding
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (width + left + right - dw * (kw - 1) - 1) // sw + 1
    xp = np.zeros((n, c, h + top + bottom, width + left + right), dtype=x.dtype)
    xp[:, :, top:top + h, left:left + width] = x
    return xp, oh, ow


def _taps(xp, w, groups, stride, dilation, oh, ow):
    """Yields (g, c, ky, kx, patch) in the definition's order per group."""
    cout, cin_g, kh, kw = w.shape
    sh, sw = stride
    dh, dw = dilation
    for g in range(groups):
        for c in range(cin_g):
            for ky in range(kh):
                for kx in range(kw):
                    y0, x0 = ky * dh, kx * dw
                    patch = xp[:, g * cin_g + c, y0:y0 + sh * (oh - 1) + 1:sh,
                               x0:x0 + sw * (ow - 1) + 1:sw]
                    yield g, c, ky, kx, patch


def conv_oracle(x, w, bias=None, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
                groups=1, activation=None) -> np.ndarray:
    xp, oh, ow = _geometry(x, w, stride, padding, dilation)
    cout_g = w.shape[0] // groups
    acc = np.zeros((x.shape[0], w.shape[0], oh, ow), dtype=np.float32)
    with np.errstate(all="ignore"):
        for g, c, ky, kx, patch in _taps(xp, w, groups, stride, dilation, oh, ow):
            rows = slice(g * cout_g, (g + 1) * cout_g)
            prod = np.multiply(w[rows, c, ky, kx][None, :, None, None], patch[:, None],
                               dtype=np.float32)
            acc[:, rows] = np.add(acc[:, rows], prod, dtype=np.float32)
        if bias is not None:
            acc = np.add(acc, bias[None, :, None, None], dtype=np.float32)
        if activation in ("relu", "relu6"):
            acc = np.where(acc < 0, np.float32(0), acc)
        if activation == "relu6":
            acc = np.where(acc > 6, np.float32(6), acc)
    acc = np.ascontiguousarray(acc, dtype=np.float32)
    acc.view(np.uint32)[np.isnan(acc)] = 0x7FC00000
    return acc


def conv_float64(x, w, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1):
    """(the float64 sum, the Higham bound k*u*sum|w*x| + 1e-30) without bias."""
    xp, oh, ow = _geometry(x.astype(np.float64), w.astype(np.float64), stride, padding, dilation)
    cout_g = w.shape[0] // groups
    k = w.shape[1] * w.shape[2] * w.shape[3]
    total = np.zeros((x.shape[0], w.shape[0], oh, ow))
    magnitude = np.zeros_like(total)
    w64 = w.astype(np.float64)
    for g, c, ky, kx, patch in _taps(xp, w64, groups, stride, dilation, oh, ow):
        rows = slice(g * cout_g, (g + 1) * cout_g)
        prod = w64[rows, c, ky, kx][None, :, None, None] * patch[:, None]
        total[:, rows] += prod
        magnitude[:, rows] += np.abs(prod)
    return total, k * 2.0 ** -24 * magnitude + 1e-30


def conv_argv(x, w, bias, y, stride, padding, dilation, groups, activation):
    """sb_conv2d's argument structure for contiguous numpy operands (path and
    mode unused by the naive reference)."""
    n, c, h, width = x.shape
    cout, cin_g, kh, kw = w.shape
    return _abi.Conv2dArgs(
        0, 1, 1, n, c, h, width, cout, kh, kw, groups,
        stride[0], stride[1], dilation[0], dilation[1], *padding,
        x.ctypes.data, w.ctypes.data, 0,
        bias.ctypes.data if bias is not None else 0,
        activation_code(activation, "conv_naive"), y.ctypes.data)


def conv_naive(x, w, bias=None, stride=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1),
               groups=1, activation=None) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    w = np.ascontiguousarray(w, dtype=np.float32)
    n, c, h, width = x.shape
    oh = (h + padding[0] + padding[1] - dilation[0] * (w.shape[2] - 1) - 1) // stride[0] + 1
    ow = (width + padding[2] + padding[3] - dilation[1] * (w.shape[3] - 1) - 1) // stride[1] + 1
    y = np.empty((n, w.shape[0], oh, ow), dtype=np.float32)
    args = conv_argv(x, w, bias, y, stride, padding, dilation, groups, activation)
    status = _lib.lib.sb_conv2d_naive(ctypes.addressof(args))
    assert status == 0, status
    return y
