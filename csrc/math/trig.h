/* Exact sin and cos of float32 (docs/exact-ops.md, "sin and cos"): the
 * argument reduced modulo pi/2 with integer arithmetic on 320 bits of 2/pi
 * (Payne and Hanek's method, which stays exact for every float32, up to
 * 2^128), then Taylor polynomials in binary64 and one rounding to float32.
 * Integer steps are exact; every floating-point step is one IEEE binary64
 * operation, so every path, runtime and thread count gives the same bits. */
#ifndef SB_TRIG_H
#define SB_TRIG_H

#include <stddef.h>
#include <stdint.h>
#include "math/transcendental.h"

/* floor(2^320 * 2/pi), most significant word first (docs/exact-ops-tables.md). */
static const uint32_t sb_two_over_pi_words[10] = {
    0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u,
    0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au, 0x424dd2e0u,
};

#define SB_PI_OVER_2 0x1.921fb54442d18p+0
#define SB_TRIG_SMALL 0.78125   /* below pi/4: no reduction */

/* The binary64 values nearest (-1)^(i+1) / (2i + 3)! and (-1)^(i+1) / (2i + 2)!. */
static const double sb_sin_s[8] = {
    -0x1.5555555555555p-3, 0x1.1111111111111p-7, -0x1.a01a01a01a01ap-13, 0x1.71de3a556c734p-19,
    -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33, -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49,
};
static const double sb_cos_c[8] = {
    -0x1.0000000000000p-1, 0x1.5555555555555p-5, -0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-16,
    -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29, -0x1.93974a8c07c9dp-37, 0x1.ae7f3e733b81fp-45,
};

/* Bits [low, low + 64) of the 11-word product p (p[10] least significant). */
static inline uint64_t sbt_bits_at(const uint32_t p[11], int low)
{
    int k = low >> 5, sh = low & 31;
    uint64_t w0 = k < 11 ? p[10 - k] : 0, w1 = k + 1 < 11 ? p[9 - k] : 0;
    uint64_t w2 = k + 2 < 11 ? p[8 - k] : 0;
    uint64_t a = (w1 << 32) | w0;
    return sh ? (a >> sh) | (w2 << (64 - sh)) : a;
}

typedef struct { double r; int q; } sbt_quadrant;

/* a = |x| >= SB_TRIG_SMALL, finite: a = q pi/2 + r (q mod 4), |r| <= pi/4 (about). */
static inline sbt_quadrant sbt_reduce_pi_over_2(float a)
{
    uint32_t bits = sbt_bits32(a);
    uint64_t m = (bits & 0x7fffffu) | 0x800000u;
    int e = (int)(bits >> 23) - 150;             /* a = m 2^e */
    uint32_t p[11];
    uint64_t carry = 0;
    for (int j = 9; j >= 0; --j) {
        uint64_t t = m * sb_two_over_pi_words[j] + carry;
        p[j + 1] = (uint32_t)t;
        carry = t >> 32;
    }
    p[0] = (uint32_t)carry;
    int s = 320 - e;                             /* a 2/pi = p / 2^s */
    uint64_t lo = sbt_bits_at(p, s - 128), hi = sbt_bits_at(p, s - 64);
    int q = (int)(sbt_bits_at(p, s) & 3u);
    int negative = (int)(hi >> 63);
    if (negative) {                              /* fraction >= 1/2: 1 - it, next quadrant */
        lo = ~lo + 1u;
        hi = ~hi + (lo == 0 ? 1u : 0u);
        q = (q + 1) & 3;
    }
    /* the fraction's four 32-bit words, each exact in binary64, summed from the top */
    double d = (double)(uint32_t)(hi >> 32) * 0x1p-32 + (double)(uint32_t)hi * 0x1p-64;
    d = d + (double)(uint32_t)(lo >> 32) * 0x1p-96;
    d = d + (double)(uint32_t)lo * 0x1p-128;
    double r = d * SB_PI_OVER_2;
    sbt_quadrant out = { negative ? -r : r, q };
    return out;
}

static inline double sbt_sin_poly(double r)
{
    double z = r * r, p = sb_sin_s[7];
    for (int i = 6; i >= 0; --i) p = p * z + sb_sin_s[i];
    return r + (r * z) * p;
}

static inline double sbt_cos_poly(double r)
{
    double z = r * r, p = sb_cos_c[7];
    for (int i = 6; i >= 0; --i) p = p * z + sb_cos_c[i];
    return 1.0 + z * p;
}

/* sin (want_cos = 0) or cos (1) of a float32, before its sign and NaN rules. */
static inline double sbt_sin_cos_abs(float x, int want_cos)
{
    float a = sbt_float(sbt_bits32(x) & 0x7fffffffu);
    sbt_quadrant red = { (double)a, 0 };
    if (a >= SB_TRIG_SMALL && a < sbt_float(0x7f800000u)) red = sbt_reduce_pi_over_2(a);
    int q = (red.q + want_cos) & 3;              /* cos(a) = sin(a + pi/2) */
    double v = (q & 1) ? sbt_cos_poly(red.r) : sbt_sin_poly(red.r);
    return (q & 2) ? -v : v;
}

/* The inputs |x| where the recipe's binary64 value lies on the wrong side of
 * a float32 rounding midpoint (bench/accuracy_exhaustive.py over all 2^32
 * inputs), with the correctly rounded results for |x|: part of the
 * definition, like log's. */
#define SB_SIN_EXCEPTIONS(X) X(0x46199998u, 0xbeb1fa5du)
#define SB_COS_EXCEPTIONS(X) X(0x5f18b878u, 0x3f7f14bbu) X(0x6115cb11u, 0x3f78142fu)

/* Bit arithmetic, not compares, for the reason sb_exact_log gives. */
#define SB_TRIG_EXCEPTION(in, out)                                                          \
    {                                                                                       \
        uint32_t d = abits ^ (in), m = ((d | (0u - d)) >> 31) - 1u;                         \
        ybits = (ybits & ~m) | ((out) & m);                                                 \
    }

static inline float sb_exact_sin(float x)
{
    uint32_t abits = sbt_bits32(x) & 0x7fffffffu;
    uint32_t ybits = sbt_bits32((float)sbt_sin_cos_abs(x, 0));
    SB_SIN_EXCEPTIONS(SB_TRIG_EXCEPTION)
    ybits ^= sbt_bits32(x) & 0x80000000u;       /* sin(-x) = -sin(x) */
    float y = sbt_float(ybits);
    y = x - x != 0.0f ? sbt_float(SB_CANONICAL_NAN_BITS) : y;   /* +-inf and NaN */
    return sbt_nan_in_nan_out(x, y);
}

static inline float sb_exact_cos(float x)
{
    uint32_t abits = sbt_bits32(x) & 0x7fffffffu;
    uint32_t ybits = sbt_bits32((float)sbt_sin_cos_abs(x, 1));
    SB_COS_EXCEPTIONS(SB_TRIG_EXCEPTION)
    float y = sbt_float(ybits);
    y = x - x != 0.0f ? sbt_float(SB_CANONICAL_NAN_BITS) : y;
    return sbt_nan_in_nan_out(x, y);
}

#undef SB_TRIG_EXCEPTION

/* The fast route (docs/exact-ops.md, "sin and cos: the fast route"). The
 * functions above are correctly rounded for every float32 (checked over all
 * 2^32 inputs), so any route that is also correctly rounded gives their
 * bits. For |x| < 2^19 this one reduces by Cody and Waite's method (pi/2 as
 * P1 + P2 + P3; q P1 and q P2 are exact, a - q P1 is exact), evaluates the
 * same Taylor polynomials (no fused multiply-add: exact-mode code never
 * has one, tests/builds/test_codegen.py), and keeps the result only when the rounding test
 * proves it: the binary64 value v is within |v| 2^-46 of sin x (the error
 * analysis gives under 2^-48), so when v - |v| 2^-46 and v + |v| 2^-46
 * round to the same float32, that float is sin x correctly rounded.
 * Otherwise (about one input in four million, and every |x| >= 2^19, inf
 * and NaN) it returns SBT_ROUTE_UNSURE and the caller runs the recipe above.
 * Branch-free, so a vector path's compiler runs it a lane per element. */
#define SB_TRIG_FAST_LIMIT 0x1p19
#define SB_TWO_OVER_PI 0x1.45f306dc9c883p-1
#define SB_PI_OVER_2_P1 0x1.921fb544p+0    /* pi/2's first 33 bits */
#define SB_PI_OVER_2_P2 0x1.0b4611a6p-34   /* the next 33 */
#define SB_PI_OVER_2_P3 0x1.3198a2e037073p-69

static inline __attribute__((always_inline)) float sbt_sin_cos_fast(float x, int want_cos)
{
    double a = (double)x;
    double shifted = a * SB_TWO_OVER_PI + 0x1.8p52;  /* q = round(a 2/pi) in its low bits */
    double q = shifted - 0x1.8p52;
    uint64_t quadrant = sbt_bits64(shifted) + (uint64_t)want_cos;   /* q mod 4, + 1 for cos */
    double r = ((a - q * SB_PI_OVER_2_P1) - q * SB_PI_OVER_2_P2) - q * SB_PI_OVER_2_P3;
    /* odd quadrants: cos r = 1 + (1 z) C(z); even: sin r = r + (r z) S(z).
     * One polynomial per lane, its coefficients and base picked by a bit
     * mask (a compare can become a branch, and the loop scalar): the same
     * operations, hence the same value, as evaluating the lane's own. */
    uint64_t odd = 0u - (quadrant & 1u);
#define SBT_PICK(even_value, odd_value)                                                      \
    sbt_double(sbt_bits64(even_value) ^ (odd & (sbt_bits64(even_value) ^ sbt_bits64(odd_value))))
    double z = r * r, base = SBT_PICK(r, 1.0);
    double p = SBT_PICK(sb_sin_s[6], sb_cos_c[6]);
#define SBT_STEP(i) p = p * z + SBT_PICK(sb_sin_s[i], sb_cos_c[i])
    SBT_STEP(5); SBT_STEP(4); SBT_STEP(3); SBT_STEP(2); SBT_STEP(1); SBT_STEP(0);
#undef SBT_STEP   /* written out: a loop here is left scalar */
#undef SBT_PICK
    double v = base + (base * z) * p;
    v = sbt_double(sbt_bits64(v) ^ ((quadrant & 2u) << 62));   /* quadrants 2, 3: -v */
    double err = sbt_double(sbt_bits64(v) & 0x7fffffffffffffffu) * 0x1p-46;
    float lo = (float)(v - err), hi = (float)(v + err);
    int sure = lo == hi && a < SB_TRIG_FAST_LIMIT && a > -SB_TRIG_FAST_LIMIT;   /* NaN: false */
    if (!want_cos) lo = x == 0.0f ? x : lo;   /* sin(-0) = -0, where r + r z S(z) gives +0 */
    return sure ? lo : sbt_float(SBT_ROUTE_UNSURE);
}

/* sin or cos of n floats; y may be x (in place). */
#define SBT_SIN_FAST(v) sbt_sin_cos_fast((v), 0)
#define SBT_COS_FAST(v) sbt_sin_cos_fast((v), 1)
static inline void sb_exact_sin_n(const float *x, float *y, size_t n)
{
    SBT_ROUTE_N(x, y, n, SBT_SIN_FAST, sb_exact_sin);
}
static inline void sb_exact_cos_n(const float *x, float *y, size_t n)
{
    SBT_ROUTE_N(x, y, n, SBT_COS_FAST, sb_exact_cos);
}

#endif
