/* The fast route of exact exp and sigmoid (docs/exact-ops.md, "exp and
 * sigmoid: the fast route"). The recipes of transcendental.h are correctly
 * rounded for every float32 (checked over all 2^32 inputs), so any route that
 * is also correctly rounded gives their bits. This one evaluates e^t in
 * binary64 with a 16-entry table, k = round(16 t / ln 2), e^t = 2^(k/16) e^r,
 * r = t - k ln2/16 (|r| <= ln2/32; k ln2/16's first part is exact and so is
 * t - k LN2_16_HI) and a degree-5 Taylor polynomial (relative error 2^-42.6,
 * every rounding after it below 2^-51), so the binary64 value v lies within
 * |v| 2^-42 of the true one. It keeps v's float32 rounding only when v -
 * |v| 2^-41 and v + |v| 2^-41 round to the same float32 (then the true value
 * does too: rounding is monotonic); otherwise, and for inputs outside the
 * route's range (and NaN), the element takes the recipe. About 1 input in
 * 2^16 fails the test. No fused multiply-add: exact-mode code never has one
 * (tests/builds/test_codegen.py). Branch-free, so a vector path's compiler
 * runs it a lane per element. bench/exhaustive_identical.py checks that the
 * kernels give the recipes' bits for all 2^32 inputs. */
#ifndef SB_EXP_ROUTE_H
#define SB_EXP_ROUTE_H

#include <stddef.h>
#include <stdint.h>
#include "math/transcendental.h"

/* e^t in binary64 for |t| <= 120, within 2^-42 relative. */
static inline __attribute__((always_inline)) double sbt_exp_route_double(double t)
{
    double shifted = t * SB_EXP_ROUTE_16_OVER_LN2 + 0x1.8p52;   /* k in the low bits */
    double k = shifted - 0x1.8p52;
    double r = (t - k * SB_EXP_ROUTE_LN2_16_HI) - k * SB_EXP_ROUTE_LN2_16_LO;
    const double *c = sb_exp_route_q;
    double q = c[3];
    q = q * r + c[2]; q = q * r + c[1]; q = q * r + c[0];
    double e = r + (r * r) * q;
    /* k + 16 * 1023 >= 0: its low 4 bits are k mod 16, the rest 2^(k div 16)'s
     * biased exponent */
    uint64_t kb = (sbt_bits64(shifted) & 0xfffffffffffffu) - 0x8000000000000u + 16368u;
    double scale = sbt_double((kb >> 4) << 52);
    return (sb_exp_route_table[kb & 15u] * scale) * (1.0 + e);
}

/* v's float32 rounding when the rounding test proves it, else the marker.
 * The margin is |v| 2^-41, so v may have either sign (log's route shares
 * it; exp's and sigmoid's v are positive). */
static inline __attribute__((always_inline)) float sbt_exp_route_round(double v, int in_range)
{
    double err = sbt_double(sbt_bits64(v) & 0x7fffffffffffffffu) * 0x1p-41;   /* |v| 2^-41 */
    float lo = (float)(v - err), hi = (float)(v + err);
    return lo == hi && in_range ? lo : sbt_float(SBT_ROUTE_UNSURE);
}

/* Beyond the ranges the recipe's result is saturated, and the route gives it
 * directly rather than leaving the element to the recipe (a Softmax under an
 * attention mask has many such): exp is +0 below -104 (e^-104 is below half
 * of 2^-149) and +inf above 89; sigmoid is 1 for x > 100 (1 + e^-100 is 1 in
 * binary64) and +0 for x < -104. NaN stays unsure (every compare is false). */
static inline __attribute__((always_inline)) float sbt_exp_route(float x)
{
    double t = (double)x;
    float r = sbt_exp_route_round(sbt_exp_route_double(t), t >= -104.0 && t <= 89.0);
    r = t < -104.0 ? 0.0f : r;
    return t > 89.0 ? sbt_float(0x7f800000u) : r;
}

static inline __attribute__((always_inline)) float sbt_sigmoid_route(float x)
{
    double t = -(double)x;
    double v = 1.0 / (1.0 + sbt_exp_route_double(t));
    float r = sbt_exp_route_round(v, t >= -100.0 && t <= 100.0);
    r = t < -100.0 ? 1.0f : r;
    return t > 104.0 ? 0.0f : r;
}

/* exp or sigmoid of n floats; y may be x (in place). */
static inline void sb_exact_exp_n(const float *x, float *y, size_t n)
{
    SBT_ROUTE_N(x, y, n, sbt_exp_route, sb_exact_exp);
}
static inline void sb_exact_sigmoid_n(const float *x, float *y, size_t n)
{
    SBT_ROUTE_N(x, y, n, sbt_sigmoid_route, sb_exact_sigmoid);
}

#endif
