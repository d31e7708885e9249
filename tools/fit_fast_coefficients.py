"""Fits the polynomial coefficients of fast mode's tanh, log and erf
(csrc/math/fast_math.h) and prints them as C arrays, or with --check compares
them with the arrays in csrc/math/fast_math.h.

    python tools/fit_fast_coefficients.py [--check]

Each polynomial is a least-squares fit in relative error over Chebyshev
nodes of its interval, against mpmath at 100 bits, with its coefficients
rounded to float32 afterwards. Fast mode promises an error bound, not these
exact values: bench/accuracy_exhaustive.py --mode fast measures the bound
over all 2^32 inputs, and that measurement, not the fit, is what the docs
quote. (The fit runs through numpy's least squares; a different LAPACK may
round a float64 coefficient differently, and very rarely its float32 value.)
Needs numpy and mpmath.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import mpmath as mp
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
mp.mp.prec = 100
NODES = 3000


def fit(f, a: float, b: float, powers, center: float = 0.0) -> list[float]:
    """float32 coefficients c_i of sum c_i u^powers[i], u = x - center,
    minimizing the relative error to f on [a, b]."""
    t = np.cos(np.pi * (np.arange(NODES) + 0.5) / NODES)
    x = (a + b) / 2 + (b - a) / 2 * t
    y = np.array([float(f(mp.mpf(float(v)))) for v in x])
    u = x - center
    basis = np.stack([u ** p for p in powers], 1)
    weight = 1 / np.abs(y)
    c = np.linalg.lstsq(basis * weight[:, None], y * weight, rcond=None)[0]
    return [float(np.float32(v)) for v in c]


def tables() -> dict[str, list[float]]:
    return {
        # tanh(a) = a + a^3 P(a^2) on |a| < 0.625
        "sbf_tanh_p": fit(lambda a: (mp.tanh(a) - a) / a ** 3, 1e-4, 0.625, range(0, 14, 2)),
        # log(1 + f) = f + f^2 Q(f), 1 + f in [sqrt(2)/2, sqrt(2))
        "sbf_log_q": fit(lambda f: (mp.log1p(f) - f) / f ** 2, float(np.sqrt(0.5) - 1),
                         float(np.sqrt(2) - 1), range(9)),
        # erf(a) = a + a P(a^2) on |a| < 0.875
        "sbf_erf_small": fit(lambda a: mp.erf(a) / a - 1, 1e-4, 0.875, range(0, 14, 2)),
        # erfc(a) e^(a^2) = R(a - 2.4) on [0.875, 3.93]
        "sbf_erfc_scaled": fit(lambda a: mp.erfc(a) * mp.exp(a * a), 0.875, 3.93, range(13),
                               center=2.4),
    }


def c_float(v: float) -> str:
    """A float32 value as a C hex float literal, e.g. -0x1.555556p-2f."""
    m, e = float(v).hex().split("p")
    m = m.rstrip("0").rstrip(".") if "." in m else m
    return f"{m}p{int(e)}f"


def from_header() -> dict[str, list[float]]:
    text = (ROOT / "csrc" / "math" / "fast_math.h").read_text()
    out = {}
    for name, body in re.findall(r"static const float (\w+)\[\d+\] = \{(.*?)\};", text, re.S):
        out[name] = [float.fromhex(v.strip().rstrip("f")) for v in body.split(",") if v.strip()]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with csrc/math/fast_math.h instead of printing")
    args = parser.parse_args()
    fitted = tables()
    if not args.check:
        for name, values in fitted.items():
            print(f"static const float {name}[{len(values)}] = {{")
            print("    " + ", ".join(c_float(v) for v in values) + ",")
            print("};")
        return 0
    header = from_header()
    bad = [name for name, values in fitted.items() if header.get(name) != values]
    for name in bad:
        print(f"{name}: fitted {fitted[name]}, header {header.get(name)}", file=sys.stderr)
    print("fast_math.h matches the fit" if not bad else f"{len(bad)} table(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
