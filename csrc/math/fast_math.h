/* Fast mode's exp, sigmoid, tanh, log and erf: float32 arithmetic, fused multiply-add where
 * the path's compiler flags provide it (avx2, avx512, arm64), separate
 * multiply and add elsewhere. Each path is repeatable (same bits for a given
 * path and input, whatever the thread count); paths may differ from each
 * other and from exact mode. docs/exact-ops.md ("Fast mode") gives the
 * measured error bound. Their polynomial coefficients come from
 * tools/fit_fast_coefficients.py (least squares in relative error, rounded
 * to float32). The activations' fast kernels are the exact ones. */
#ifndef SB_FAST_MATH_H
#define SB_FAST_MATH_H

#include "math/activation.h"

#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define SBF_FMA(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define SBF_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* e^x: k = x / ln 2 rounded, r = x - k ln 2 (ln 2 in two parts, the first
 * with 13 bits so that k * LN2_HI is exact without FMA), a degree-6
 * polynomial (Chebyshev, coefficients rounded to float32) for e^r, then
 * 2^k applied in two exact halves so that subnormal results round once. */
static inline float sbf_exp_core(float t)   /* t in [-104, 89] (sbf_clamp) */
{
    const float shifter = 0x1.8p23f;
    float shifted = SBF_FMA(t, 0x1.715476p+0f, shifter);
    float k = shifted - shifter;
    float r = SBF_FMA(-k, 0x1.62ep-1f, t);
    r = SBF_FMA(-k, 0x1.0bfbe8p-15f, r);
    float p = 0x1.6d7532p-10f;
    p = SBF_FMA(p, r, 0x1.126fa6p-7f);
    p = SBF_FMA(p, r, 0x1.5554acp-5f);
    p = SBF_FMA(p, r, 0x1.555404p-3f);
    p = SBF_FMA(p, r, 0x1p-1f);
    p = SBF_FMA(p, r, 1.0f);
    p = SBF_FMA(p, r, 1.0f);
    int32_t ki = (int32_t)(sbt_bits32(shifted) - sbt_bits32(shifter));
    /* k1 = floor(k / 2) by an arithmetic shift, not k / 2: WebAssembly SIMD
     * has no lane-wise division, and clang (emscripten 3.1.6) made the
     * vector k / 2 four scalar divisions, lane by lane. Either split gives
     * the same bits: k1 and k2 lie in [-75, 64] for k in [-150, 128], so
     * p * s1 is exact and normal and the second product rounds once (all
     * 2^32 inputs of exp, sigmoid, tanh and erf compared on every native
     * path). */
    int32_t k1 = ki >> 1, k2 = ki - k1;
    float s1 = sbt_float((uint32_t)(k1 + 127) << 23), s2 = sbt_float((uint32_t)(k2 + 127) << 23);
    return (p * s1) * s2;
}

/* The clamps to [lo, hi] send NaN to a bound (the callers put NaN back at
 * the end), so that no compiler may read them as IEEE minimum and maximum:
 * `x < lo ? lo : x` is maximum(x, lo) (NaN in, NaN out), which clang
 * emitted as WebAssembly's f32x4.max, and V8 lowers that to about eight
 * x86 instructions to get NaN and signed zeros right; `hi > t ? t : hi` is
 * f32x4.pmin there (one minps) and the lower clamp a compare and a select.
 * Finite inputs clamp exactly as before, so the results are the same bits. */
static inline float sbf_clamp(float x, float lo, float hi)
{
    float t = lo < x ? x : lo;
    return hi > t ? t : hi;
}

static inline float sb_fast_exp(float x)
{
    return sbt_nan_in_nan_out(x, sbf_exp_core(sbf_clamp(x, -104.0f, 89.0f)));
}

/* With e = e^-|x| (the fast exp, once): 1 / (1 + e) for x >= 0 and
 * e / (1 + e) for x < 0, the same function. e never overflows, so the tail's
 * small and subnormal results come out of e itself, and one exp serves both
 * signs (half the work of evaluating e^-x and e^x). */
static inline float sb_fast_sigmoid(float x)
{
    /* sb_fast_exp of -|x| <= 0, less the steps that cannot act there (the
     * upper clamp; its NaN test, which the one below repeats): same bits */
    float t = -__builtin_fabsf(x);
    float e = sbf_exp_core(-104.0f < t ? t : -104.0f);   /* sbf_clamp's lower half */
    float y = (x < 0.0f ? e : 1.0f) / (1.0f + e);
    return sbt_nan_in_nan_out(x, y);
}

/* Horner's rule in float32 over coefficients lowest degree first, written
 * out so that the compiler vectorizes the element loop around it. */
#define SBF_H2(u, c, i) SBF_FMA(c[(i) + 1], (u), c[i])
#define SBF_H3(u, c, i) SBF_FMA(SBF_H2(u, c, (i) + 1), (u), c[i])
#define SBF_H4(u, c, i) SBF_FMA(SBF_H3(u, c, (i) + 1), (u), c[i])
#define SBF_H5(u, c, i) SBF_FMA(SBF_H4(u, c, (i) + 1), (u), c[i])
#define SBF_H6(u, c, i) SBF_FMA(SBF_H5(u, c, (i) + 1), (u), c[i])
#define SBF_H7(u, c, i) SBF_FMA(SBF_H6(u, c, (i) + 1), (u), c[i])
#define SBF_H8(u, c, i) SBF_FMA(SBF_H7(u, c, (i) + 1), (u), c[i])
#define SBF_H9(u, c, i) SBF_FMA(SBF_H8(u, c, (i) + 1), (u), c[i])
#define SBF_H10(u, c, i) SBF_FMA(SBF_H9(u, c, (i) + 1), (u), c[i])
#define SBF_H11(u, c, i) SBF_FMA(SBF_H10(u, c, (i) + 1), (u), c[i])
#define SBF_H12(u, c, i) SBF_FMA(SBF_H11(u, c, (i) + 1), (u), c[i])
#define SBF_H13(u, c, i) SBF_FMA(SBF_H12(u, c, (i) + 1), (u), c[i])

static const float sbf_tanh_p[7] = {
    -0x1.555556p-2f, 0x1.11111p-3f, -0x1.ba1a82p-5f, 0x1.662a26p-6f,
    -0x1.202beep-7f, 0x1.b2448p-9f, -0x1.c6fb7ap-11f,
};

/* tanh: |x| < 0.625: a + a^3 P(a^2); above, 1 - 2 / (1 + e^(2a)) with the
 * fast exp (e^(2a) overflows to inf past 44, giving 1); the sign put back. */
static inline float sb_fast_tanh(float x)
{
    uint32_t sign = sbt_bits32(x) & 0x80000000u;
    float a = sbt_float(sbt_bits32(x) & 0x7fffffffu);
    float z = a * a, p = SBF_H7(z, sbf_tanh_p, 0);
    float small = SBF_FMA(a * z, p, a);
    float big = 1.0f - 2.0f / (1.0f + sb_fast_exp(2.0f * (a < 44.0f ? a : 44.0f)));
    float y = a < 0.625f ? small : big;
    return sbt_nan_in_nan_out(x, sbt_float(sbt_bits32(y) | sign));
}

static const float sbf_log_q[9] = {
    -0x1.fffffep-2f, 0x1.555556p-2f, -0x1.00020ep-2f, 0x1.999e52p-3f, -0x1.5481b8p-3f,
    0x1.231076p-3f, -0x1.0d13bap-3f, 0x1.039fb6p-3f, -0x1.36c578p-4f,
};

/* log: x = 2^e (1 + f) with 1 + f in [sqrt(2)/2, sqrt(2)) (subnormals scaled
 * by 2^23 first); log(1 + f) = f + f^2 Q(f); e ln 2 in two parts (the first
 * with 14 bits, so e * LN2_HI is exact). Special values as exact mode's. */
static inline float sb_fast_log(float x)
{
    int subnormal = x < 0x1p-126f;
    float xs = subnormal ? x * 0x1p23f : x;
    /* Unsigned arithmetic: inputs the selects below discard (negatives, NaN)
     * must not overflow a signed int. The shift of the int32 is arithmetic. */
    uint32_t bits = sbt_bits32(xs);
    int32_t e = (int32_t)(bits - 0x3f3504f3u) >> 23;
    float f = sbt_float(bits - ((uint32_t)e << 23)) - 1.0f;
    float ef = (float)(subnormal ? e - 23 : e), q = SBF_H9(f, sbf_log_q, 0);
    float log1p_f = SBF_FMA(f * f, q, f);
    float y = SBF_FMA(ef, 0x1.62e4p-1f, SBF_FMA(ef, 0x1.7f7d1cp-20f, log1p_f));
    y = x == 0.0f ? sbt_float(0xff800000u) : y;
    y = x == sbt_float(0x7f800000u) ? x : y;
    y = x < 0.0f ? sbt_float(SB_CANONICAL_NAN_BITS) : y;
    return sbt_nan_in_nan_out(x, y);
}

static const float sbf_erf_small[7] = {
    0x1.06eba8p-3f, -0x1.812744p-2f, 0x1.ce2e78p-4f, -0x1.b81936p-6f,
    0x1.553ce0p-8f, -0x1.aec856p-11f, 0x1.6d79f6p-14f,
};
static const float sbf_erfc_scaled[13] = {
    0x1.bf7c44p-3f, -0x1.45fb28p-4f, 0x1.c276eep-6f, -0x1.29162ep-7f, 0x1.77dc28p-9f,
    -0x1.c9a144p-11f, 0x1.0da464p-12f, -0x1.3781b0p-14f, 0x1.55097ep-16f, -0x1.40b7b0p-18f,
    0x1.69cb9ep-20f, -0x1.3c4a50p-21f, 0x1.1f1910p-23f,
};

/* erf: |x| < 0.875: a + a P(a^2); up to 3.92: 1 - e^(-a^2) R(a - 2.4), R
 * fitting erfc(a) e^(a^2); beyond, 1; the sign put back. */
static inline float sb_fast_erf(float x)
{
    uint32_t sign = sbt_bits32(x) & 0x80000000u;
    float a = sbt_float(sbt_bits32(x) & 0x7fffffffu);
    float z = a * a, p = SBF_H7(z, sbf_erf_small, 0);
    float small = SBF_FMA(a, p, a);
    float ab = a < 4.0f ? a : 4.0f;
    float r = SBF_H13(ab - 2.4f, sbf_erfc_scaled, 0);
    float big = 1.0f - sb_fast_exp(-(ab * ab)) * r;
    float y = a < 0.875f ? small : (a < 3.92f ? big : 1.0f);
    return sbt_nan_in_nan_out(x, sbt_float(sbt_bits32(y) | sign));
}

#endif
