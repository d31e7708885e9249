"""Writes the exact transcendentals' constants: csrc/math/transcendental_coefficients.h
and docs/exact-ops-tables.md (the same numbers, as hex floats, for a port).

The polynomials are Chebyshev interpolants computed by mpmath at 50 digits,
each coefficient then rounded to the nearest binary64. Those rounded values
ARE the definition of exact mode: once committed they never change unless the
contract does (a change moves every pinned digest). Run it only to check that
it still reproduces the committed files:

    python tools/make_coefficients.py --check

It needs mpmath (a development tool, not a runtime dependency). For each
polynomial it prints the largest error of the rounded polynomial, evaluated
exactly, against the function it approximates, on a dense grid.
"""
from __future__ import annotations

import argparse
import pathlib
import struct
import sys

import mpmath as mp

mp.mp.dps = 50
ROOT = pathlib.Path(__file__).resolve().parent.parent
HEADER = ROOT / "csrc" / "math" / "transcendental_coefficients.h"
TABLES = ROOT / "docs" / "exact-ops-tables.md"

LN2 = mp.log(2)
ERF_PIECES = 14            # [0.5, 4) in pieces of width 1/4
ERF_PIECE_DEGREE = 11
EXP_DEGREE = 9             # P(r), so that e^r - 1 = r + r^2 P(r) has degree 11
LOG_DEGREE = 6             # G(z)
ERF_SMALL_DEGREE = 8       # A(z)
LOG_ROUTE_DEGREE = 6       # log's fast route: P(r), log1p(r) = r + r^2 P(r)


def to_double(v: mp.mpf) -> float:
    return float(mp.mpf(v))      # mpmath rounds to nearest


def chebyshev(f, a, b, degree: int) -> list[float]:
    """Coefficients c0..c_degree (lowest first) of the Chebyshev interpolant,
    each rounded to binary64."""
    coeffs = mp.chebyfit(f, [a, b], degree + 1)        # highest degree first
    return [to_double(c) for c in reversed(coeffs)]


def horner(coeffs: list[float], x) -> mp.mpf:
    acc = mp.mpf(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = acc * x + mp.mpf(c)
    return acc


def worst(err, a, b, points: int = 4000) -> float:
    return max(float(err(mp.mpf(a) + (mp.mpf(b) - mp.mpf(a)) * i / points))
               for i in range(points + 1))


def log2_or_none(v: float) -> str:
    return "0" if v == 0 else f"2^{float(mp.log(v, 2)):.1f}"


def build() -> tuple[dict, list[str]]:
    report = []
    ln2_hi = to_double(mp.ldexp(mp.floor(mp.ldexp(LN2, 32)), -32))   # 32 bits, exact
    ln2_lo = to_double(LN2 - mp.mpf(ln2_hi))
    consts = {
        "SB_INV_LN2": to_double(1 / LN2),
        "SB_LN2_HI": ln2_hi,
        "SB_LN2_LO": ln2_lo,
        "SB_SQRT2": to_double(mp.sqrt(2)),
    }

    # exp: e^r - 1 = r + r^2 P(r) on |r| <= ln2/2.
    half = LN2 / 2

    def p_exact(r):
        return mp.mpf(1) / 2 if r == 0 else (mp.expm1(r) - r) / (r * r)

    exp_p = chebyshev(p_exact, -half, half, EXP_DEGREE)
    e = worst(lambda r: 0 if r == 0 else
              abs(r + r * r * horner(exp_p, r) - mp.expm1(r)) / abs(mp.expm1(r)), -half, half)
    report.append(f"exp: r + r^2 P(r) against e^r - 1, relative: {log2_or_none(e)}")

    # log: log m = 2s + s z G(z), s = (m-1)/(m+1), z = s^2, m in [sqrt(2)/2, sqrt(2)).
    zmax = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2

    def g_exact(z):
        if z == 0:
            return mp.mpf(2) / 3
        s = mp.sqrt(z)
        return (2 * mp.atanh(s) - 2 * s) / (s * z)

    log_g = chebyshev(g_exact, 0, zmax, LOG_DEGREE)

    def log_err(z):
        if z == 0:
            return 0
        s = mp.sqrt(z)
        return abs(2 * s + s * z * horner(log_g, z) - 2 * mp.atanh(s)) / (2 * mp.atanh(s))

    report.append(f"log: 2s + s z G(z) against log m, relative: {log2_or_none(worst(log_err, 0, zmax))}")

    # erf, |x| < 1/2: erf(x) = x A(x^2).
    def a_exact(z):
        return 2 / mp.sqrt(mp.pi) if z == 0 else mp.erf(mp.sqrt(z)) / mp.sqrt(z)

    erf_small = chebyshev(a_exact, 0, mp.mpf(1) / 4, ERF_SMALL_DEGREE)
    e = worst(lambda z: abs(horner(erf_small, z) - a_exact(z)) / a_exact(z), 0, mp.mpf(1) / 4)
    report.append(f"erf |x| < 1/2: A(z) against erf(x)/x, relative: {log2_or_none(e)}")

    # erf, 1/2 <= |x| < 4: piece j covers [1/2 + j/4, 3/4 + j/4), polynomial in
    # u = |x| - (5/8 + j/4).
    pieces = []
    e = 0.0
    for j in range(ERF_PIECES):
        centre = mp.mpf(5) / 8 + mp.mpf(j) / 4
        coeffs = chebyshev(lambda u: mp.erf(centre + u), -mp.mpf(1) / 8, mp.mpf(1) / 8,
                           ERF_PIECE_DEGREE)
        pieces.append(coeffs)
        e = max(e, worst(lambda u: abs(horner(coeffs, u) - mp.erf(centre + u)) / mp.erf(centre + u),
                         -mp.mpf(1) / 8, mp.mpf(1) / 8, 400))
    report.append(f"erf 1/2 <= |x| < 4: pieces against erf, relative: {log2_or_none(e)}")

    # The fast route of exp and sigmoid (math/exp_route.h): not part of the
    # contract (its results are kept only when a rounding test proves them
    # correctly rounded), so these may change. e^t = 2^(k/16) e^r with k =
    # round(16 t / ln 2), r = t - k ln2/16 (ln2/16 in two parts, the first
    # with 36 significant bits so that k times it is exact for |k| < 2^12),
    # e^r - 1 = r + r^2 (1/2 + r/6 + r^2/24 + r^3/120) on |r| <= ln2/32.
    l16 = LN2 / 16
    l16_hi = to_double(mp.ldexp(mp.floor(mp.ldexp(l16, 40)), -40))
    route = {
        "SB_EXP_ROUTE_16_OVER_LN2": to_double(16 / LN2),
        "SB_EXP_ROUTE_LN2_16_HI": l16_hi,
        "SB_EXP_ROUTE_LN2_16_LO": to_double(l16 - mp.mpf(l16_hi)),
    }
    taylor = [to_double(1 / mp.factorial(i)) for i in (2, 3, 4, 5)]
    table = [to_double(mp.power(2, mp.mpf(j) / 16)) for j in range(16)]
    rmax = LN2 / 32
    e = worst(lambda r: abs(1 + r + r * r * horner(taylor, r) - mp.exp(r)) / mp.exp(r), -rmax, rmax)
    report.append(f"exp's fast route: 1 + r + r^2 Q(r) against e^r on |r| <= ln2/32, relative: "
                  f"{log2_or_none(e)}")

    # log's fast route (math/log_route.h): x = 2^e z with z in [OFF, 2 OFF),
    # from x's binary64 bits less OFF's; the next 4 bits pick one of 16
    # intervals of z, each with c_j (1/c_j rounded to 20 significant bits, so
    # that z c_j is exact: z has at most 24), 1 for the interval around 1 (so
    # that log x = log1p(z - 1) there, whatever its size); r = z c_j - 1
    # (exact); log x = e ln 2 - log c_j + log1p(r), log1p(r) = r + r^2 P(r).
    log_off = 0x3FE6800000000000
    inv_c, log_c, rlo, rhi = [], [], mp.mpf(0), mp.mpf(0)
    for j in range(16):
        zlo, zhi = bits_to_double(log_off + (j << 48)), bits_to_double(log_off + ((j + 1) << 48))
        if zlo < 1 < zhi:
            c = 1.0
        else:
            m, ex = mp.frexp(2 / (mp.mpf(zlo) + zhi))
            c = to_double(mp.ldexp(mp.nint(mp.ldexp(m, 20)), ex - 20))
        inv_c.append(c)
        log_c.append(to_double(-mp.log(c)))
        rlo, rhi = min(rlo, mp.mpf(zlo) * c - 1), max(rhi, mp.mpf(zhi) * c - 1)
    log_p = chebyshev(lambda r: (mp.log1p(r) - r) / (r * r) if r != 0 else mp.mpf(-0.5), rlo, rhi,
                      LOG_ROUTE_DEGREE)
    e = worst(lambda r: abs(r + r * r * horner(log_p, r) - mp.log1p(r)) / abs(mp.log1p(r))
              if r != 0 else mp.mpf(0), rlo, rhi)
    report.append(f"log's fast route: r + r^2 P(r) against log1p(r) on [{float(rlo):.5f}, "
                  f"{float(rhi):.5f}], relative: {log2_or_none(e)}")
    return {"consts": consts, "exp_p": exp_p, "log_g": log_g, "erf_small": erf_small,
            "erf_pieces": pieces, "route": route, "route_q": taylor, "route_table": table,
            "log_route_off": log_off, "log_route_inv_c": inv_c,
            "log_route_log_c": log_c, "log_route_p": log_p}, report


def bits_to_double(bits: int) -> float:
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


LOG_EXCEPTIONS = [(0x3C413D3A, 0xC08E158F), (0x41178FEB, 0x400FE5E7), (0x4C5D65A5, 0x418F034B),
                  (0x65D890D3, 0x4254D1F9), (0x6F31A8EC, 0x42845A89)]
SIGMOID_SMALL = [("c3", mp.mpf(-1) / 48), ("c5", mp.mpf(1) / 480), ("c7", mp.mpf(-17) / 80640),
                 ("c9", mp.mpf(31) / 1451520)]


# sin's and cos's reduction constant and exceptions (math/trig.h writes them out)
TRIG_SECTIONS = """## TWO_OVER_PI: the 320 bits sin and cos reduce with

`T = floor(2^320 * 2/pi)`, as 80 hexadecimal digits, most significant first:

`0xa2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e0`

Their polynomial coefficients are the binary64 values nearest to `±1/n!`
(exact-ops.md, "sin and cos"); their only other table is the next one.

## TRIG_EXCEPTIONS: inputs whose sin or cos is given, not computed

The values `|x|` where the sin or cos recipe's binary64 value lies on the
wrong side of a float32 rounding midpoint (found by
`bench/accuracy_exhaustive.py` over all 2^32 inputs). The listed result
replaces the recipe's rounded value for `|x|`, before sin's sign rule.

| function | \\|x\\| bits | result bits |
|---|---|---|
| sin | `0x46199998` | `0xBEB1FA5D` |
| cos | `0x5F18B878` | `0x3F7F14BB` |
| cos | `0x6115CB11` | `0x3F78142F` |

"""


def hexf(v: float) -> str:
    return float.hex(v)


def header_text(t: dict) -> str:
    lines = [
        "/* The exact transcendentals' constants (docs/exact-ops.md, docs/exact-ops-tables.md).",
        " * Written by tools/make_coefficients.py: every value is part of exact mode's",
        " * contract and never changes unless the contract does. Polynomials are",
        " * stored lowest degree first. */",
        "#ifndef SB_TRANSCENDENTAL_COEFFICIENTS_H",
        "#define SB_TRANSCENDENTAL_COEFFICIENTS_H",
        "",
    ]
    for name, v in t["consts"].items():
        lines.append(f"#define {name} {hexf(v)}")
    lines.append("")

    def array(name: str, values: list[float]) -> None:
        lines.append(f"static const double {name}[{len(values)}] = {{")
        for v in values:
            lines.append(f"    {hexf(v)},")
        lines.append("};")

    for name, v in SIGMOID_SMALL:
        lines.append(f"#define SB_SIGMOID_{name.upper()} {hexf(to_double(v))}")
    lines.append("")
    array("sb_exp_p", t["exp_p"])
    array("sb_log_g", t["log_g"])
    assert len(t["erf_small"]) <= ERF_PIECE_DEGREE + 1
    lines.append(f"#define SB_ERF_PIECES {ERF_PIECES}")
    lines.append(f"#define SB_ERF_SMALL_COLUMN {ERF_PIECES}")
    lines.append(f"#define SB_ERF_COLUMNS {ERF_PIECES + 1}")
    lines.append(f"#define SB_ERF_TERMS {ERF_PIECE_DEGREE + 1}")
    lines.append("/* Coefficient i of column j at [i * SB_ERF_COLUMNS + j]: coefficient-major, so")
    lines.append(" * a vector of elements gathers one coefficient from one row. Columns 0-13: the")
    lines.append(" * pieces ERF_B[j]; column 14: ERF_A (c0..c8), zero above, so that one Horner")
    lines.append(" * loop of SB_ERF_TERMS steps evaluates either (its zero steps give +0, then c8). */")
    lines.append(f"static const double sb_erf_table[{(ERF_PIECE_DEGREE + 1) * (ERF_PIECES + 1)}] = {{")
    small = list(t["erf_small"]) + [0.0] * (ERF_PIECE_DEGREE + 1 - len(t["erf_small"]))
    for i in range(ERF_PIECE_DEGREE + 1):
        row = ", ".join([hexf(t["erf_pieces"][j][i]) for j in range(ERF_PIECES)] + [hexf(small[i])])
        lines.append(f"    /* c{i} */ {row},")
    lines.append("};")
    lines += ["", "/* The fast route of exp and sigmoid (math/exp_route.h): not part of the contract;",
              " * a result is kept only when the rounding test proves it correctly rounded. */"]
    for name, v in t["route"].items():
        lines.append(f"#define {name} {hexf(v)}")
    array("sb_exp_route_q", t["route_q"])
    lines.append("/* 2^(j/16), j = 0..15, each rounded to the nearest binary64 */")
    array("sb_exp_route_table", t["route_table"])
    lines += ["/* log's fast route (math/log_route.h): x = 2^e z, z in [OFF, 2 OFF), interval j of",
              " * z by the next 4 bits; C[j] ~ 1/z there (1 around 1), L[j] = -log C[j],",
              " * log1p(r) = r + r^2 P(r) */",
              f"#define SB_LOG_ROUTE_OFF 0x{t['log_route_off']:016X}u"]
    array("sb_log_route_c", t["log_route_inv_c"])
    array("sb_log_route_l", t["log_route_log_c"])
    array("sb_log_route_p", t["log_route_p"])
    lines += ["", "#endif", ""]
    return "\n".join(lines)


def tables_text(t: dict, report: list[str]) -> str:
    out = [
        "# Exact transcendentals: the constants",
        "",
        "Every number docs/exact-ops.md refers to, as a hexadecimal binary64 value",
        "(C99 / Python `float.fromhex` notation). Polynomials are listed lowest degree",
        "first: c0 is the constant term. These values are the definition; how they were",
        "found (Chebyshev interpolation at 50 digits, then rounding each coefficient",
        "to the nearest binary64, by `tools/make_coefficients.py`) is only history.",
        "",
        "## Constants",
        "",
        "| name | value | what |",
        "|---|---|---|",
    ]
    what = {"SB_INV_LN2": "1/ln 2", "SB_LN2_HI": "ln 2 cut to 32 significant bits",
            "SB_LN2_LO": "ln 2 - LN2_HI", "SB_SQRT2": "sqrt(2)"}
    for name, v in t["consts"].items():
        out.append(f"| {name[3:]} | `{hexf(v)}` | {what[name]} |")

    def poly(title: str, values: list[float]) -> None:
        out.extend(["", f"## {title}", "", "| i | c_i |", "|---|---|"])
        out.extend(f"| {i} | `{hexf(v)}` |" for i, v in enumerate(values))

    poly("EXP_P: e^r - 1 = r + r^2 P(r)", t["exp_p"])
    poly("LOG_G: log m = 2s + s z G(z)", t["log_g"])
    poly("ERF_A: erf(x) = x A(x^2) for |x| < 1/2", t["erf_small"])
    out.extend(["", "## ERF_B: erf on [1/2 + j/4, 3/4 + j/4), polynomial in u = |x| - (5/8 + j/4)", ""])
    for j, coeffs in enumerate(t["erf_pieces"]):
        out.append(f"Piece {j}: " + ", ".join(f"`{hexf(v)}`" for v in coeffs))
        out.append("")
    out.extend(["## LOG_EXCEPTIONS: inputs whose log is given, not computed", "",
                "The five positive inputs where the log recipe's binary64 value lies on the",
                "wrong side of a float32 rounding midpoint (found by",
                "`bench/accuracy_exhaustive.py` over all 2^32 inputs); the result is the",
                "correctly rounded one listed here.", "", "| input bits | result bits |",
                "|---|---|"])
    out.extend(f"| `0x{a:08X}` | `0x{b:08X}` |" for a, b in LOG_EXCEPTIONS)
    out.extend(["", "## SIGMOID_SMALL: sigmoid near 0", "",
                "Taylor coefficients of sigmoid(x) - 1/2 = x (1/4 + c3 x^2 + c5 x^4 + c7 x^6 + c9 x^8),",
                "each rounded to the nearest binary64:", "", "| name | value |", "|---|---|"])
    out.extend(f"| {n} | `{hexf(to_double(v))}` |" for n, v in SIGMOID_SMALL)
    out.extend(["", TRIG_SECTIONS.rstrip("\n")])
    out.extend(["", "## EXP_ROUTE: the fast route of exp and sigmoid (not part of the contract)", "",
                "Only a result the rounding test proves correctly rounded is kept",
                "(exact-ops.md, \"exp and sigmoid: the fast route\"), so these values may change",
                "without changing a bit.", "", "| name | value |", "|---|---|"])
    out.extend(f"| {n[len('SB_EXP_ROUTE_'):]} | `{hexf(v)}` |" for n, v in t["route"].items())
    out.extend(f"| Q{i} (1/{(2, 6, 24, 120)[i]}) | `{hexf(v)}` |" for i, v in enumerate(t["route_q"]))
    out.extend(f"| T{j} (2^({j}/16)) | `{hexf(v)}` |" for j, v in enumerate(t["route_table"]))
    out.extend(["", "## LOG_ROUTE: the fast route of log (not part of the contract)",
                "", "Like EXP_ROUTE: only a result the rounding test proves correctly rounded is",
                "kept (exact-ops.md, \"log: the fast route\").", "",
                f"OFF = `0x{t['log_route_off']:016X}` (the binary64 bits of "
                f"{bits_to_double(t['log_route_off'])!r}).", "",
                "| j | C_j | L_j = -log C_j |", "|---|---|---|"])
    out.extend(f"| {j} | `{hexf(c)}` | `{hexf(v)}` |"
               for j, (c, v) in enumerate(zip(t["log_route_inv_c"], t["log_route_log_c"])))
    out.extend(["", "| i | P_i (log1p(r) = r + r^2 P(r)) |", "|---|---|"])
    out.extend(f"| {i} | `{hexf(v)}` |" for i, v in enumerate(t["log_route_p"]))
    out.extend(["", "## Approximation errors (the polynomials evaluated exactly)", ""])
    out.extend(f"- {line}" for line in report)
    out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed files instead of writing them")
    args = parser.parse_args()
    tables, report = build()
    for line in report:
        print(line)
    outputs = {HEADER: header_text(tables), TABLES: tables_text(tables, report)}
    if args.check:
        stale = [str(p) for p, text in outputs.items() if not p.exists() or p.read_text() != text]
        if stale:
            print("differs from the committed file:", *stale, sep="\n  ")
            return 1
        print("the committed files match")
        return 0
    for path, text in outputs.items():
        path.write_text(text)
        print("wrote", path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
