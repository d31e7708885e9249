/* Fast mode's exp and sigmoid: float32 arithmetic, fused multiply-add where
 * the path's compiler flags provide it (avx2, avx512, arm64), separate
 * multiply and add elsewhere. Each path is repeatable (same bits for a given
 * path and input, whatever the thread count); paths may differ from each
 * other and from exact mode. docs/exact-ops.md ("Fast mode") gives the
 * measured error bound. The other functions' fast kernels are the exact ones. */
#ifndef SB_FAST_MATH_H
#define SB_FAST_MATH_H

#include "activation.h"

#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define SBF_FMA(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define SBF_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* e^x: k = x / ln 2 rounded, r = x - k ln 2 (ln 2 in two parts, the first
 * with 13 bits so that k * LN2_HI is exact without FMA), a degree-6
 * polynomial (Chebyshev, coefficients rounded to float32) for e^r, then
 * 2^k applied in two exact halves so that subnormal results round once. */
static inline float sb_fast_exp(float x)
{
    const float shifter = 0x1.8p23f;
    float t = x < -104.0f ? -104.0f : x;
    t = t > 89.0f ? 89.0f : t;
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
    int32_t k1 = ki / 2, k2 = ki - k1;
    float s1 = sbt_float((uint32_t)(k1 + 127) << 23), s2 = sbt_float((uint32_t)(k2 + 127) << 23);
    return sbt_nan_in_nan_out(x, (p * s1) * s2);
}

/* 1 / (1 + e^-x) with the fast exp; below -16, e^x itself (the two differ
 * by a factor 1 + e^x, within 2^-23 of 1), which keeps the tail's small and
 * subnormal results where e^-x would overflow. */
static inline float sb_fast_sigmoid(float x)
{
    float y = 1.0f / (1.0f + sb_fast_exp(-x));
    y = x < -16.0f ? sb_fast_exp(x) : y;
    return sbt_nan_in_nan_out(x, y);
}

#endif
