"""An independent implementation of the exact transcendentals, written from
docs/exact-ops.md in numpy binary64 arithmetic, with the constants read from
docs/exact-ops-tables.md (not from the C header): a test oracle.

numpy's float64 add, subtract, multiply and divide are single IEEE operations
(never fused), and astype(np.float32) rounds to nearest with gradual
underflow, so these functions give the documented bits.
"""
from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np

TABLES = (Path(__file__).resolve().parent.parent / "docs" / "exact-ops-tables.md").read_text()
CANONICAL_NAN = np.uint32(0x7FC00000)


def _section(title_start: str) -> str:
    start = TABLES.index("## " + title_start)
    end = TABLES.find("\n## ", start + 3)
    return TABLES[start:end if end >= 0 else None]


def _hex_values(text: str) -> list[float]:
    return [float.fromhex(v) for v in re.findall(r"`(-?0x[0-9a-fp.+-]+)`", text)]


def _constant(name: str) -> float:
    return float.fromhex(re.search(r"\| %s \| `([^`]+)`" % name, TABLES).group(1))


INV_LN2 = _constant("INV_LN2")
LN2_HI = _constant("LN2_HI")
LN2_LO = _constant("LN2_LO")
SQRT2 = _constant("SQRT2")
EXP_P = _hex_values(_section("EXP_P"))
LOG_G = _hex_values(_section("LOG_G"))
ERF_A = _hex_values(_section("ERF_A"))
ERF_B = [_hex_values(line) for line in _section("ERF_B").splitlines()
         if line.startswith("Piece ")]
SHIFT = float.fromhex("0x1.8p52")
assert len(EXP_P) == 10 and len(LOG_G) == 7 and len(ERF_A) == 9
assert len(ERF_B) == 14 and all(len(p) == 12 for p in ERF_B)


def _horner(coeffs, v):
    q = np.full_like(v, coeffs[-1]) if isinstance(coeffs[-1], float) else coeffs[-1]
    for c in reversed(coeffs[:-1]):
        q = q * v + c
    return q


def _reduce(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(scale = 2^k, E ~ e^r - 1) of the documented reduction."""
    s = t * INV_LN2 + SHIFT
    k = s - SHIFT
    r = (t - k * LN2_HI) - k * LN2_LO
    e = r + (r * r) * _horner(EXP_P, r)
    scale_bits = (s.view(np.uint64) + np.uint64(1023)) << np.uint64(52)
    return scale_bits.view(np.float64), e


def _finish(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = y.astype(np.float32)
    out[np.isnan(x)] = CANONICAL_NAN.view(np.float32)
    return out


def _with_sign_of(x: np.ndarray, y32: np.ndarray) -> np.ndarray:
    sign = x.view(np.uint32) & np.uint32(0x80000000)
    return (y32.view(np.uint32) | sign).view(np.float32)


def exp(x: np.ndarray) -> np.ndarray:
    t = np.clip(x.astype(np.float64), -104.0, 89.0)
    scale, e = _reduce(np.nan_to_num(t))
    return _finish(x, scale * (1.0 + e))


SIGMOID_SMALL = [0.25] + _hex_values(_section("SIGMOID_SMALL"))     # 1/4, c3, c5, c7, c9
assert len(SIGMOID_SMALL) == 5


def sigmoid(x: np.ndarray) -> np.ndarray:
    t = np.clip(-x.astype(np.float64), -200.0, 200.0)
    scale, e = _reduce(np.nan_to_num(t))
    y = (1.0 / (1.0 + scale * (1.0 + e))).astype(np.float32)
    v = x.astype(np.float64)
    q = v * _horner(SIGMOID_SMALL, v * v)
    grid = np.where(q >= 0, float.fromhex("0x1.8p28"), float.fromhex("0x1.8p27"))
    small = (0.5 + ((q + grid) - grid)).astype(np.float32)
    y = np.where(np.abs(x) < np.float32(2.0 ** -6), small, y)
    return _finish(x, y.astype(np.float64))


def _exp_double(t: np.ndarray) -> np.ndarray:
    scale, e = _reduce(t)
    return scale * (1.0 + e)


def _tanh_abs_double(a: np.ndarray) -> np.ndarray:
    """tanh(a) for a >= 0 in binary64: m / (m + 2), m = e^min(2a, 40) - 1."""
    t = np.minimum(np.nan_to_num(2.0 * a), 40.0)
    scale, e = _reduce(t)
    m = (scale - 1.0) + scale * e
    return m / (m + 2.0)


def tanh(x: np.ndarray) -> np.ndarray:
    y = _tanh_abs_double(np.abs(x).astype(np.float64)).astype(np.float32)
    return _finish(x, _with_sign_of(x, y).astype(np.float64))


def _log_double(v: np.ndarray) -> np.ndarray:
    """Steps 1-5 of the document's log, in binary64 (v positive, finite)."""
    bits = v.astype(np.float64).view(np.uint64)
    m = ((bits & np.uint64(0x000FFFFFFFFFFFFF)) | np.uint64(0x3FF0000000000000)).view(np.float64)
    e = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.float64) - 1023.0
    big = m > SQRT2
    m = np.where(big, m * 0.5, m)
    e = np.where(big, e + 1.0, e)
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    log_m = (s + s) + (s * z) * _horner(LOG_G, z)
    return e * LN2_HI + (e * LN2_LO + log_m)


LOG_EXCEPTIONS = {int(a, 16): int(b, 16) for a, b in re.findall(
    r"\| `(0x[0-9A-F]{8})` \| `(0x[0-9A-F]{8})` \|", _section("LOG_EXCEPTIONS"))}
assert len(LOG_EXCEPTIONS) == 5


def log(x: np.ndarray) -> np.ndarray:
    y = _log_double(x.astype(np.float64)).astype(np.float32).astype(np.float64)
    bits = x.view(np.uint32)
    for inp, res in LOG_EXCEPTIONS.items():
        y = np.where(bits == inp, np.uint32(res).view(np.float32).astype(np.float64), y)
    y = np.where(x == 0, -np.inf, y)
    y = np.where(x == np.inf, np.inf, y)
    y = np.where(x < 0, np.nan, y)
    out = y.astype(np.float32)
    out[np.isnan(out) | np.isnan(x)] = CANONICAL_NAN.view(np.float32)
    return out


def _erf_abs_double(a: np.ndarray) -> np.ndarray:
    """erf(a) for a >= 0 in binary64 (the pieces of the document)."""
    small = a * _horner(ERF_A, a * a)
    j = np.clip(np.floor(np.nan_to_num(4.0 * np.minimum(a, 3.9375))) - 2, 0, 13).astype(np.int64)
    u = a - (0.625 + 0.25 * j)
    table = np.array(ERF_B)                    # (14, 12)
    pieces = _horner([table[j, i] for i in range(12)], u)
    return np.where(a < 0.5, small, np.where(a >= 4.0, 1.0, pieces))


def erf(x: np.ndarray) -> np.ndarray:
    y32 = _erf_abs_double(np.abs(x).astype(np.float64)).astype(np.float32)
    return _finish(x, _with_sign_of(x, y32).astype(np.float64))


# ---- sin and cos ------------------------------------------------------------

TWO_OVER_PI = int(re.search(r"`(0x[0-9a-f]{80})`", _section("TWO_OVER_PI")).group(1), 16)
PI_OVER_2 = float.fromhex("0x1.921fb54442d18p+0")
SIN_S = [float(Fraction((-1) ** (i + 1), math.factorial(2 * i + 3))) for i in range(8)]
COS_C = [float(Fraction((-1) ** (i + 1), math.factorial(2 * i + 2))) for i in range(8)]


TRIG_EXCEPTIONS = [(f, int(a, 16), int(b, 16)) for f, a, b in re.findall(
    r"\| (sin|cos) \| `(0x[0-9A-F]{8})` \| `(0x[0-9A-F]{8})` \|", _section("TRIG_EXCEPTIONS"))]
assert len(TRIG_EXCEPTIONS) == 3


def _reduce_pi_over_2(a: float) -> tuple[float, int]:
    """(r, q) of the document's reduction for a float32 a >= 0.78125, finite,
    in exact Python integers: the fraction's 128 bits below 2^s of m * T."""
    bits = int(np.float32(a).view(np.uint32))
    m = (bits & 0x7FFFFF) | 0x800000
    s = 320 - ((bits >> 23) - 150)
    n = ((m * TWO_OVER_PI) >> (s - 128)) & ((1 << 130) - 1)
    q, f = n >> 128, n & ((1 << 128) - 1)
    negative = f >= 1 << 127
    if negative:
        f, q = (1 << 128) - f, (q + 1) & 3
    words = [(f >> (96 - 32 * i)) & 0xFFFFFFFF for i in range(4)]   # most significant first
    d = words[0] * 2.0 ** -32 + words[1] * 2.0 ** -64
    d = d + words[2] * 2.0 ** -96
    d = d + words[3] * 2.0 ** -128
    r = d * PI_OVER_2
    return (-r if negative else r), q


def _sin_cos(x: np.ndarray, want_cos: int) -> np.ndarray:
    a = np.abs(x.astype(np.float32))
    r = a.astype(np.float64)
    q = np.zeros(a.shape, np.int64)
    big = np.flatnonzero((a >= 0.78125) & np.isfinite(a))
    for i in big:
        r.flat[i], q.flat[i] = _reduce_pi_over_2(float(a.flat[i]))
    q = (q + want_cos) & 3
    z = r * r
    sin_p = r + (r * z) * _horner(SIN_S, z)
    cos_p = 1.0 + z * _horner(COS_C, z)
    v = np.where(q & 1, cos_p, sin_p)
    v = np.where(q & 2, -v, v)
    out = v.astype(np.float32)
    abits = a.view(np.uint32)
    for fn, inp, res in TRIG_EXCEPTIONS:
        if fn == ("cos" if want_cos else "sin"):
            out = np.where(abits == inp, np.uint32(res).view(np.float32), out)
    if not want_cos:
        out = np.where(np.signbit(x), -out, out)
    out[~np.isfinite(x)] = CANONICAL_NAN.view(np.float32)
    return out


def sin(x: np.ndarray) -> np.ndarray:
    return _sin_cos(x, 0)


def cos(x: np.ndarray) -> np.ndarray:
    return _sin_cos(x, 1)


# ---- activations ----------------------------------------------------------

F32 = np.float32
INV_SQRT2 = float.fromhex("0x1.6a09e667f3bcdp-1")
SQRT_2_OVER_PI = float.fromhex("0x1.9884533d43651p-1")
GELU_TANH_CUBIC = float.fromhex("0x1.6e4e26d4801f7p-5")


def canonical(y: np.ndarray) -> np.ndarray:
    """y as float32 with every NaN 0x7FC00000."""
    y = np.array(y, dtype=np.float32)
    y[np.isnan(y)] = CANONICAL_NAN.view(np.float32)
    return y


def relu(x):
    return canonical(np.where(x <= 0, F32(0), x))


def relu6(x):
    v = np.where(x <= 0, F32(0), x)
    return canonical(np.where(v > 6, F32(6), v))


def leaky_relu(x, slope=0.01):
    return canonical(np.where(x > 0, x, x * F32(slope)))


def _relu6_of_x_plus_3(x):
    t = x + F32(3)
    t = np.where(t < 0, F32(0), t)
    return np.where(t > 6, F32(6), t)


def hardsigmoid(x):
    return canonical(_relu6_of_x_plus_3(x) / F32(6))


def hardswish(x):
    return canonical((x * _relu6_of_x_plus_3(x)) / F32(6))


def _minus_inf_to_minus_zero(x, y):
    return np.where(x == -np.inf, F32(-0.0), y)


def silu(x):
    v = x.astype(np.float64)
    t = np.clip(-v, -200.0, 200.0)
    y = (v / (1.0 + _exp_double(np.nan_to_num(t)))).astype(np.float32)
    return _finish(x, _minus_inf_to_minus_zero(x, y).astype(np.float64))


def gelu(x):
    v = x.astype(np.float64)
    a = v * INV_SQRT2
    e = _erf_abs_double(np.abs(a))
    e = np.where(a < 0, -e, e)
    y = ((v * 0.5) * (1.0 + e)).astype(np.float32)
    return _finish(x, _minus_inf_to_minus_zero(x, y).astype(np.float64))


def gelu_tanh(x):
    v = x.astype(np.float64)
    cube = (v * v) * v
    z = SQRT_2_OVER_PI * (v + GELU_TANH_CUBIC * cube)
    t = np.clip(-2.0 * z, -200.0, 200.0)
    y = (v / (1.0 + _exp_double(np.nan_to_num(t)))).astype(np.float32)
    return _finish(x, _minus_inf_to_minus_zero(x, y).astype(np.float64))


def elu(x, alpha=1.0):
    """x where x >= 0, else float32(alpha * expm1(max(x, -200))) in binary64."""
    t = np.maximum(np.nan_to_num(x.astype(np.float64), neginf=-200.0), -200.0)
    scale, e = _reduce(np.minimum(t, 0.0))
    neg = (float(F32(alpha)) * ((scale - 1.0) + scale * e)).astype(np.float32)
    return _finish(x, np.where(x >= 0, x, neg).astype(np.float64))


def _softplus_double(v):
    """max(v, 0) + log1p(e^-|v|), log1p(u) = log(w) + (u - (w - 1)) / w, w = 1 + u."""
    a = np.minimum(np.abs(v), 200.0)
    u = _exp_double(-np.nan_to_num(a))
    w = 1.0 + u
    return np.maximum(np.nan_to_num(v, nan=0.0), 0.0) + (_log_double(w) + (u - (w - 1.0)) / w)


def softplus(x):
    v = x.astype(np.float64)
    y = _softplus_double(v)
    return _finish(x, np.where(np.isinf(v) & (v > 0), np.inf, y))


def mish(x):
    v = x.astype(np.float64)
    y = (v * _tanh_abs_double(_softplus_double(v))).astype(np.float32)
    return _finish(x, _minus_inf_to_minus_zero(x, y).astype(np.float64))


def _quiet(fn):
    """The oracle computes garbage for NaN and infinite inputs before it
    selects their documented results; numpy's warnings about it are noise."""
    def run(x: np.ndarray, *args) -> np.ndarray:
        with np.errstate(all="ignore"):
            return fn(np.asarray(x, dtype=np.float32), *args)
    run.__name__ = fn.__name__
    return run


exp, log, tanh, erf, sigmoid, sin, cos = (_quiet(f) for f in (exp, log, tanh, erf, sigmoid,
                                                             sin, cos))
(relu, relu6, leaky_relu, hardsigmoid, hardswish, silu, gelu, gelu_tanh, elu, softplus, mish) = (
    _quiet(f) for f in (relu, relu6, leaky_relu, hardsigmoid, hardswish, silu, gelu, gelu_tanh,
                        elu, softplus, mish))
FUNCTIONS = {"exp": exp, "log": log, "tanh": tanh, "erf": erf, "sigmoid": sigmoid, "sin": sin,
             "cos": cos}
def sqrt(x):
    return canonical(np.sqrt(x))


sqrt = _quiet(sqrt)
ACTIVATIONS = {"sqrt": sqrt, "relu": relu, "relu6": relu6, "leaky_relu": leaky_relu, "gelu": gelu,
               "gelu_tanh": gelu_tanh, "silu": silu, "hardswish": hardswish,
               "hardsigmoid": hardsigmoid, "sigmoid": sigmoid, "tanh": tanh, "elu": elu,
               "softplus": softplus, "mish": mish}
