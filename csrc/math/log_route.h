/* The fast route of exact log (docs/exact-ops.md, "log: the fast route").
 * The recipe of transcendental.h, with its five listed exceptions, is
 * correctly rounded for every float32 (checked over all 2^32 inputs), so
 * any value that provably rounds to the same float32 gives its bits. This
 * route needs no division: x (widened to binary64, where float32 subnormals
 * are normal) = 2^e z with z in [OFF, 2 OFF), OFF = 0.703125, taken from x's
 * bits less OFF's; the next 4 bits pick one of 16 intervals of z, whose C[j]
 * is about 1/z there (20 significant bits, so z C[j], at most 44 bits, and
 * r = z C[j] - 1, within a factor 2 of 1, are exact; C[j] = 1 for the
 * interval around 1, so that near x = 1 r is z - 1 and nothing cancels);
 * log x = e ln 2 + L[j] + log1p(r), L[j] = -log C[j] to binary64, and
 * log1p(r) = r + r^2 P(r) (degree 6, relative error 2^-49.5 on r's range
 * [-0.0295, 0.0313]). The terms never cancel by more than a factor 2 (|log
 * x| >= 0.0157 unless e = 0 and j is 1's interval), so v lies within |v|
 * 2^-47 of log x. Its float32 rounding is kept when the rounding test of
 * exp's route proves it; the unsure and the inputs outside (0, inf) take
 * the recipe. No fused multiply-add (exact-mode code never has one);
 * branch-free, so that a vector path's compiler runs it a lane per element. */
#ifndef SB_LOG_ROUTE_H
#define SB_LOG_ROUTE_H

#include <stddef.h>
#include <stdint.h>
#include "math/exp_route.h"
#include "math/transcendental.h"

/* log x in binary64 for a positive finite x (widened), within 2^-47 relative. */
static inline __attribute__((always_inline)) double sbt_log_route_double(double v)
{
    uint64_t bits = sbt_bits64(v);
    uint64_t tmp = bits - SB_LOG_ROUTE_OFF;
    /* e = tmp's top 12 bits as a signed integer; in binary64 by placing it in
     * the low bits of 1.5 * 2^52 (no int64 -> double conversion needed). */
    uint64_t e_biased = (uint64_t)((int64_t)tmp >> 52) + 0x4338000000000000u;
    double e = sbt_double(e_biased) - 0x1.8p52;
    size_t j = (size_t)(tmp >> 48) & 15u;
    double z = sbt_double(bits - (tmp & 0xfff0000000000000u));
    double r = z * sb_log_route_c[j] - 1.0;
    const double *p = sb_log_route_p;
    double q = p[6];
    q = q * r + p[5]; q = q * r + p[4]; q = q * r + p[3]; q = q * r + p[2];
    q = q * r + p[1]; q = q * r + p[0];
    double log1p_r = r + (r * r) * q;
    return (e * SB_LN2_HI + sb_log_route_l[j]) + (e * SB_LN2_LO + log1p_r);
}

/* v's float32 rounding when exp's rounding test proves it (log of x < 1 is
 * negative: the test takes either sign), else the marker. */
static inline __attribute__((always_inline)) float sbt_log_route(float x)
{
    return sbt_exp_route_round(sbt_log_route_double((double)x),
                               x > 0.0f && x < sbt_float(0x7f800000u));
}

/* log of n floats; y may be x (in place). */
static inline void sb_exact_log_n(const float *x, float *y, size_t n)
{
    SBT_ROUTE_N(x, y, n, sbt_log_route, sb_exact_log);
}

#endif
