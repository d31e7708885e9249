/* Exact mode's transcendentals, one float32 element at a time: exp, log,
 * tanh, erf, sigmoid. docs/exact-ops.md defines them step by step; this file
 * is that text in C, and the two must say the same thing.
 *
 * Each is a fixed sequence of binary64 + - * /, integer bit operations,
 * comparisons and selects, ending in one rounding to float32. No FMA (the
 * build passes -ffp-contract=off), no libm, no estimate instructions. The
 * functions are branch-free so that a vector ISA's compiler can give each lane
 * its own element: the lanes then compute exactly what this scalar text does.
 * A path file includes this header and loops over its elements (see
 * unary_template.h). */
#ifndef SB_TRANSCENDENTAL_H
#define SB_TRANSCENDENTAL_H

#include <stdint.h>
#include <string.h>
#include "math/transcendental_coefficients.h"

#define SB_CANONICAL_NAN_BITS 0x7fc00000u

/* Bit casts. __builtin_memcpy, not memcpy: the freestanding WebAssembly
 * build (-ffreestanding implies -fno-builtin) would otherwise call memcpy
 * for each, and a loop with a call is never vectorized. */
static inline uint64_t sbt_bits64(double v) { uint64_t u; __builtin_memcpy(&u, &v, 8); return u; }
static inline double sbt_double(uint64_t u) { double v; __builtin_memcpy(&v, &u, 8); return v; }
static inline uint32_t sbt_bits32(float v) { uint32_t u; __builtin_memcpy(&u, &v, 4); return u; }
static inline float sbt_float(uint32_t u) { float v; __builtin_memcpy(&v, &u, 4); return v; }

/* The result's bits, NaN inputs mapped to the canonical NaN. */
static inline float sbt_nan_in_nan_out(float x, float y)
{
    return x != x ? sbt_float(SB_CANONICAL_NAN_BITS) : y;
}

/* e^t = 2^k (1 + E) with E ~ e^r - 1; k = t / ln 2 rounded to nearest (ties
 * to even), r = t - k ln 2 in two steps. t must lie in [-700, 700] (or be
 * NaN: then the parts are NaN or garbage, and the caller selects). `scale` is 2^k, formed from k's bits: adding 1.5 * 2^52 to t/ln 2
 * leaves k, two's complement, in the low bits of the sum. */
typedef struct { double scale, e; } sbt_exp_parts;

static inline sbt_exp_parts sbt_exp_reduce(double t)
{
    const double shifter = 0x1.8p52;
    double shifted = t * SB_INV_LN2 + shifter;
    double k = shifted - shifter;
    double r = (t - k * SB_LN2_HI) - k * SB_LN2_LO;
    const double *p = sb_exp_p;
    double q = p[9];
    q = q * r + p[8]; q = q * r + p[7]; q = q * r + p[6]; q = q * r + p[5];
    q = q * r + p[4]; q = q * r + p[3]; q = q * r + p[2]; q = q * r + p[1];
    q = q * r + p[0];
    sbt_exp_parts parts;
    parts.e = r + (r * r) * q;
    parts.scale = sbt_double((sbt_bits64(shifted) + 1023u) << 52);
    return parts;
}

/* e^t in binary64, t in [-700, 700]. */
static inline double sbt_exp_double(double t)
{
    sbt_exp_parts parts = sbt_exp_reduce(t);
    return parts.scale * (1.0 + parts.e);
}

/* e^t - 1 in binary64, t in [-700, 700]: (2^k - 1) + 2^k E, exact 0 + E when k = 0. */
static inline double sbt_expm1_double(double t)
{
    sbt_exp_parts parts = sbt_exp_reduce(t);
    return (parts.scale - 1.0) + parts.scale * parts.e;
}

static inline float sb_exact_exp(float x)
{
    double t = (double)x;
    t = t < -104.0 ? -104.0 : t;      /* e^-104 < 2^-150: rounds to +0 */
    t = t > 89.0 ? 89.0 : t;          /* e^89 > FLT_MAX: rounds to +inf */
    return sbt_nan_in_nan_out(x, (float)sbt_exp_double(t));
}

static inline float sb_exact_sigmoid(float x)
{
    double t = -(double)x;
    t = t < -200.0 ? -200.0 : t;      /* beyond +-200 the result rounds to 1 or +0 */
    t = t > 200.0 ? 200.0 : t;
    float y = (float)(1.0 / (1.0 + sbt_exp_double(t)));
    /* |x| < 2^-6: 1/2 + q with q = x (1/4 - x^2/48 + ...) (Taylor, to x^9),
     * q rounded in binary64 to the float32 grid beside 1/2 (2^-24 above,
     * 2^-25 below) by adding and removing 1.5 * 2^28 (or 2^27): the sum's
     * rounding decided on q itself, which 1 / (1 + e^-x) cannot resolve
     * when 1/2 + x/4 lies on a rounding midpoint. */
    double X = (double)x, z = X * X;
    double p = SB_SIGMOID_C9;
    p = p * z + SB_SIGMOID_C7; p = p * z + SB_SIGMOID_C5; p = p * z + SB_SIGMOID_C3;
    p = p * z + 0.25;
    double q = X * p;
    double grid = q >= 0.0 ? 0x1.8p28 : 0x1.8p27;
    float small = (float)(0.5 + ((q + grid) - grid));
    y = sbt_float(sbt_bits32(x) & 0x7fffffffu) < 0x1p-6f ? small : y;
    return sbt_nan_in_nan_out(x, y);
}

/* tanh(a) in binary64 for a >= 0 (+inf included): m / (m + 2), m = e^(2a) - 1. */
static inline double sbt_tanh_abs_double(double a)
{
    double t = 2.0 * a;
    t = t > 40.0 ? 40.0 : t;          /* tanh(20) rounds to 1 */
    double em1 = sbt_expm1_double(t);
    return em1 / (em1 + 2.0);
}

static inline float sb_exact_tanh(float x)
{
    uint32_t sign = sbt_bits32(x) & 0x80000000u;
    float y = (float)sbt_tanh_abs_double((double)sbt_float(sbt_bits32(x) & 0x7fffffffu));
    return sbt_nan_in_nan_out(x, sbt_float(sbt_bits32(y) | sign));
}

/* log(v) in binary64 for a positive finite binary64 v: steps 1-5 of
 * docs/exact-ops.md. For a float32 value (at most 24 significant bits) it is
 * accurate enough for log's correct rounding; softplus (activation.h) also
 * takes it of 1 + u, a full binary64 significand. */
static inline double sbt_log_double(double v)
{
    /* v = 2^e m with m in [sqrt(2)/2, sqrt(2)), from the bits of the binary64
     * value (float32 subnormals are normal there). */
    uint64_t bits = sbt_bits64(v);
    double m = sbt_double((bits & 0x000fffffffffffffu) | 0x3ff0000000000000u);
    /* e = the biased exponent - 1023, an integer in binary64: the exponent
     * field placed in the low bits of 2^52, then 2^52 and 1023 subtracted
     * (both exact). The sign bit of a negative v lands there too; such a v
     * is answered by the caller's selects. */
    double e = (sbt_double((bits >> 52) | 0x4330000000000000u) - 0x1p52) - 1023.0;
    int big = m > SB_SQRT2;
    m = big ? m * 0.5 : m;
    e = big ? e + 1.0 : e;
    double s = (m - 1.0) / (m + 1.0);
    double z = s * s;
    const double *g = sb_log_g;
    double q = g[6];
    q = q * z + g[5]; q = q * z + g[4]; q = q * z + g[3]; q = q * z + g[2];
    q = q * z + g[1]; q = q * z + g[0];
    double log_m = (s + s) + (s * z) * q;
    return e * SB_LN2_HI + (e * SB_LN2_LO + log_m);
}

/* The five positive inputs where log's recipe lands on the wrong side of a
 * rounding midpoint (found by bench/accuracy_exhaustive.py over all 2^32
 * inputs), with their correctly rounded results: part of the definition. */
#define SB_LOG_EXCEPTIONS(X)                                                                \
    X(0x3c413d3au, 0xc08e158fu) X(0x41178febu, 0x400fe5e7u) X(0x4c5d65a5u, 0x418f034bu)    \
    X(0x65d890d3u, 0x4254d1f9u) X(0x6f31a8ecu, 0x42845a89u)

static inline float sb_exact_log(float x)
{
    float y = (float)sbt_log_double((double)x);
    uint32_t bits = sbt_bits32(x), ybits = sbt_bits32(y);
    /* Written as bit arithmetic (m is all ones exactly when bits == in), not
     * as compares: GCC turns a chain of compares of one value into a switch,
     * which no vector ISA can run. */
#define SB_LOG_EXCEPTION(in, out)                                                           \
    {                                                                                       \
        uint32_t d = bits ^ (in), m = ((d | (0u - d)) >> 31) - 1u;                          \
        ybits = (ybits & ~m) | ((out) & m);                                                 \
    }
    SB_LOG_EXCEPTIONS(SB_LOG_EXCEPTION)
#undef SB_LOG_EXCEPTION
    y = sbt_float(ybits);
    y = x == 0.0f ? sbt_float(0xff800000u) : y;                  /* log(+-0) = -inf */
    y = x == sbt_float(0x7f800000u) ? x : y;                     /* log(+inf) = +inf */
    y = x < 0.0f ? sbt_float(SB_CANONICAL_NAN_BITS) : y;         /* log(x < 0) = NaN */
    return sbt_nan_in_nan_out(x, y);
}

/* erf(a) in binary64 for a >= 0 (+inf included; NaN gives garbage that the
 * caller selects away). Also used on binary64 arguments (gelu): u = a - c is
 * exact there too, since a and c are within a factor of 2 (Sterbenz).
 *
 * The recipe's two ranges share one Horner loop: sb_erf_table's column 14 is
 * ERF_A with zeros above c8, so for a < 1/2 the loop in t = a^2 takes +0 * t
 * + 0 = +0 three times, then c8, then exactly A's steps; multiplying by a
 * (by 1 for a piece, which is exact) ends it. The same operations on the
 * same values as evaluating both ranges and keeping one, at half the cost. */
static inline double sbt_erf_abs_double(double a)
{
    int small = a < 0.5;
    /* 1/2 <= a < 4: piece j = floor(4a) - 2, in u = a - (5/8 + j/4) */
    double ac = a >= 0.5 ? a : 0.5;   /* keeps j in [0, 13], NaN included */
    ac = ac <= 3.9375 ? ac : 3.9375;
    /* floor(4 ac) by rounding (adding and removing 1.5 * 2^52), less 1 where
     * that rounded up; its bits give the 64-bit table index, so that a
     * vector ISA gathers with lanes of binary64's width. */
    const double shifter = 0x1.8p52;
    double v = ac * 4.0;
    double k = (v + shifter) - shifter;
    k = k > v ? k - 1.0 : k;
    int64_t j = (int64_t)(sbt_bits64(k + shifter) & 0xffu) - 2;
    double u = a - (0.625 + 0.25 * (k - 2.0));
    /* a < 1/2: a A(a^2), A in column SB_ERF_SMALL_COLUMN */
    double t = small ? a * a : u;
    j = small ? SB_ERF_SMALL_COLUMN : j;
    const double *b = sb_erf_table;
    double w = b[11 * SB_ERF_COLUMNS + j];
    w = w * t + b[10 * SB_ERF_COLUMNS + j]; w = w * t + b[9 * SB_ERF_COLUMNS + j];
    w = w * t + b[8 * SB_ERF_COLUMNS + j];  w = w * t + b[7 * SB_ERF_COLUMNS + j];
    w = w * t + b[6 * SB_ERF_COLUMNS + j];  w = w * t + b[5 * SB_ERF_COLUMNS + j];
    w = w * t + b[4 * SB_ERF_COLUMNS + j];  w = w * t + b[3 * SB_ERF_COLUMNS + j];
    w = w * t + b[2 * SB_ERF_COLUMNS + j];  w = w * t + b[1 * SB_ERF_COLUMNS + j];
    w = w * t + b[j];
    double r = w * (small ? a : 1.0);
    return a >= 4.0 ? 1.0 : r;
}

static inline float sb_exact_erf(float x)
{
    double a = (double)sbt_float(sbt_bits32(x) & 0x7fffffffu);
    uint32_t sign = sbt_bits32(x) & 0x80000000u;
    float y = (float)sbt_erf_abs_double(a);
    return sbt_nan_in_nan_out(x, sbt_float(sbt_bits32(y) | sign));
}

/* The kernels' fast routes (trig.h's sin and cos, exp_route.h's exp and
 * sigmoid): a route gives an element's float32 result where its rounding
 * test proves it correctly rounded, else SBT_ROUTE_UNSURE, and those
 * elements take the recipe, whose bits the route's are. A block at a time, so
 * that the route's loop has no call in it and vectorizes, and so that y may
 * be x: the recipe reads x after the route, before the block is stored. */
#define SBT_ROUTE_UNSURE 0x7f800001u       /* a signalling NaN: never an output */
#define SBT_ROUTE_BLOCK 256

/* Elements of block[0, m) the route left unsure take RECIPE(x[i]). */
#define SBT_ROUTE_SETTLE(x, block, m, RECIPE)                                                \
    do {                                                                                     \
        for (size_t j_ = 0; j_ < (m); ++j_)                                                  \
            if (sbt_bits32((block)[j_]) == SBT_ROUTE_UNSURE) (block)[j_] = RECIPE((x)[j_]);  \
    } while (0)

/* y[i] = the route's or the recipe's result for x[i], i < n (statements). */
#define SBT_ROUTE_N(x, y, n, ROUTE, RECIPE)                                                  \
    do {                                                                                     \
        float block_[SBT_ROUTE_BLOCK];                                                       \
        for (size_t i0_ = 0; i0_ < (n); i0_ += SBT_ROUTE_BLOCK) {                            \
            const size_t m_ = (n) - i0_ < SBT_ROUTE_BLOCK ? (n) - i0_ : SBT_ROUTE_BLOCK;     \
            uint32_t unsure_ = 0;                                                            \
            for (size_t i_ = 0; i_ < m_; ++i_) {                                             \
                block_[i_] = ROUTE((x)[i0_ + i_]);                                           \
                unsure_ |= sbt_bits32(block_[i_]) == SBT_ROUTE_UNSURE;                       \
            }                                                                                \
            if (unsure_) SBT_ROUTE_SETTLE((x) + i0_, block_, m_, RECIPE);                    \
            for (size_t i_ = 0; i_ < m_; ++i_) (y)[i0_ + i_] = block_[i_];                   \
        }                                                                                    \
    } while (0)

#endif
