/* The activations, one float32 element at a time (docs/exact-ops.md,
 * "Activations"): used by the elementwise kernels (unary_template.h) and by
 * the products' epilogue (epilogue.c), so that a fused activation has the
 * same bits as the standalone one. The piecewise-linear ones are float32
 * operations in torch's order; the smooth ones are binary64 compositions of
 * transcendental.h's parts with one final rounding. Both modes. */
#ifndef SB_ACTIVATION_H
#define SB_ACTIVATION_H

#include "math/transcendental.h"

#define SB_INV_SQRT2 0x1.6a09e667f3bcdp-1        /* 1/sqrt(2) */
#define SB_SQRT_2_OVER_PI 0x1.9884533d43651p-1   /* sqrt(2/pi) */
#define SB_GELU_TANH_CUBIC 0x1.6e4e26d4801f7p-5  /* 0.044715 */

static inline float sbt_canonical(float y)
{
    return y != y ? sbt_float(SB_CANONICAL_NAN_BITS) : y;
}

/* relu(-0) is +0, as max(x, 0) gives in torch and ONNX Runtime. Written
 * with <= so that every lowering agrees: a compiler may turn the select into
 * a max instruction (clang does for WebAssembly), and max(-0, +0) is +0
 * there. (A product's sum is never -0 before its activation: a sum from +0
 * gives +0 wherever it reaches zero.) */
static inline float sb_act_relu(float x) { return sbt_canonical(x <= 0.0f ? 0.0f : x); }

static inline float sb_act_relu6(float x)
{
    float v = x <= 0.0f ? 0.0f : x;
    return sbt_canonical(v > 6.0f ? 6.0f : v);
}

static inline float sb_act_leaky_relu(float x, float slope)
{
    return sbt_canonical(x > 0.0f ? x : x * slope);
}

/* clamp(x + 3, 0, 6): the shared first steps of hardsigmoid and hardswish. */
static inline float sbt_relu6_of_x_plus_3(float x)
{
    float t = x + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    return t > 6.0f ? 6.0f : t;
}

static inline float sb_act_hardsigmoid(float x) { return sbt_canonical(sbt_relu6_of_x_plus_3(x) / 6.0f); }

/* x * relu6(x + 3) / 6, the upper clamp written `6 > t ? t : 6`: NaN goes
 * to 6 there, where `t > 6 ? 6 : t` keeps it, but x * 6 is NaN again, so
 * the bits are the same; the form clang cannot read as IEEE minimum, which
 * WebAssembly's f32x4.min would be (about eight x86 instructions under V8,
 * against one for the f32x4.pmin it emits here). hardsigmoid keeps
 * sbt_relu6_of_x_plus_3: there the NaN would be lost. */
static inline float sb_act_hardswish(float x)
{
    float t = x + 3.0f;
    t = t < 0.0f ? 0.0f : t;
    t = 6.0f > t ? t : 6.0f;
    return sbt_canonical((x * t) / 6.0f);
}

/* ONNX's HardSigmoid, max(0, min(1, alpha * x + beta)): one float32
 * multiply, one add, then the clamp with samebits.maximum/minimum's rules
 * (t <= 0 gives +0, so -0 too; t > 1 gives 1; NaN stays NaN, canonical).
 * Not torch's hardsigmoid (relu6(x + 3) / 6): the bits differ. */
#define SB_ONNX_ONE_SIXTH 0x1.555556p-3f   /* float32(1/6), ONNX HardSwish's alpha */

static inline float sb_act_hardsigmoid_onnx(float x, float alpha, float beta)
{
    float t = x * alpha;
    t = t + beta;
    t = t <= 0.0f ? 0.0f : t;
    t = t > 1.0f ? 1.0f : t;
    return sbt_canonical(t);
}

/* ONNX's HardSwish: x * HardSigmoid(x) with alpha = float32(1/6), beta = 0.5,
 * HardSigmoid written so that it compiles to one max and one min: t = x *
 * alpha + 0.5 is never -0 (a sum with +0.5 is -0 for no addend in round to
 * nearest), so `0 > t ? 0 : t` is `t <= 0 ? 0 : t` for every t, NaN passed
 * on by both; and t is NaN only when x is, so HardSigmoid's canonical NaN
 * is left to the product's. The same bits as the two functions composed
 * (all 2^32 inputs on every path: bench/results/identical-2026-12-06-
 * hardswish-onnx.md), in about half the vector instructions. */
static inline float sb_act_hardswish_onnx(float x)
{
    float t = x * SB_ONNX_ONE_SIXTH;
    t = t + 0.5f;
    t = 0.0f > t ? 0.0f : t;
    t = 1.0f > t ? t : 1.0f;   /* NaN to 1, then x * 1 is NaN: as sb_act_hardswish */
    return sbt_canonical(x * t);
}

/* x * sigmoid(x) = x / (1 + e^-x); -inf gives -0 (the limit). */
static inline float sb_act_silu(float x)
{
    double v = (double)x;
    double t = -v;
    t = t < -200.0 ? -200.0 : t;
    t = t > 200.0 ? 200.0 : t;
    float y = (float)(v / (1.0 + sbt_exp_double(t)));
    y = x == sbt_float(0xff800000u) ? -0.0f : y;
    return sbt_nan_in_nan_out(x, y);
}

/* x/2 (1 + erf(x / sqrt(2))); -inf gives -0 (the limit). */
static inline float sb_act_gelu(float x)
{
    double v = (double)x;
    double a = v * SB_INV_SQRT2;
    double ab = sbt_double(sbt_bits64(a) & 0x7fffffffffffffffu);
    double e = sbt_erf_abs_double(ab);
    e = a < 0.0 ? -e : e;
    float y = (float)((v * 0.5) * (1.0 + e));
    y = x == sbt_float(0xff800000u) ? -0.0f : y;
    return sbt_nan_in_nan_out(x, y);
}

/* torch's approximate="tanh": x/2 (1 + tanh(z)), z = sqrt(2/pi) (x +
 * 0.044715 x^3), evaluated as x / (1 + e^(-2z)) (the same function: 1 +
 * tanh(z) = 2 / (1 + e^(-2z))), which keeps its accuracy where tanh(z) is
 * near -1 and the sum would cancel. -inf gives -0 (the limit). */
static inline float sb_act_gelu_tanh(float x)
{
    double v = (double)x;
    double cube = (v * v) * v;
    double z = SB_SQRT_2_OVER_PI * (v + SB_GELU_TANH_CUBIC * cube);
    double t = -2.0 * z;
    t = t < -200.0 ? -200.0 : t;
    t = t > 200.0 ? 200.0 : t;
    float y = (float)(v / (1.0 + sbt_exp_double(t)));
    y = x == sbt_float(0xff800000u) ? -0.0f : y;
    return sbt_nan_in_nan_out(x, y);
}

/* ONNX's Elu: x for x >= 0 (so -0 stays -0), else alpha (e^x - 1) in
 * binary64 with one final rounding (alpha widened from float32); the
 * exponent is clamped at -200, where e^x - 1 is -1 to binary64's precision,
 * so -inf gives -alpha. */
static inline float sb_act_elu(float x, float alpha)
{
    double t = (double)x;
    t = t < -200.0 ? -200.0 : t;
    float neg = (float)((double)alpha * sbt_expm1_double(t));
    return sbt_canonical(x >= 0.0f ? x : neg);
}

/* log(1 + e^v) in binary64 for a binary64 v: max(v, 0) + log1p(e^-|v|),
 * log1p(u) taken as log(w) + (u - (w - 1)) / w with w = 1 + u (the second
 * term restores what rounding 1 + u lost). e^-|v| is clamped at e^-200. */
static inline double sbt_softplus_double(double v)
{
    double a = sbt_double(sbt_bits64(v) & 0x7fffffffffffffffu);
    a = a > 200.0 ? 200.0 : a;
    double u = sbt_exp_double(-a);
    double w = 1.0 + u;
    double l = sbt_log_double(w) + (u - (w - 1.0)) / w;
    return (v > 0.0 ? v : 0.0) + l;
}

/* log(1 + e^x): softplus(+inf) = +inf, softplus(-inf) = +0. */
static inline float sb_act_softplus(float x)
{
    return sbt_nan_in_nan_out(x, (float)sbt_softplus_double((double)x));
}

/* x tanh(softplus(x)), binary64 with one final rounding; -inf gives -0 (the limit). */
static inline float sb_act_mish(float x)
{
    double v = (double)x;
    float y = (float)(v * sbt_tanh_abs_double(sbt_softplus_double(v)));
    y = x == sbt_float(0xff800000u) ? -0.0f : y;
    return sbt_nan_in_nan_out(x, y);
}

/* One IEEE float32 square root (correctly rounded everywhere); NaN canonical. */
static inline float sb_exact_sqrt(float x) { return sbt_canonical(__builtin_sqrtf(x)); }

#endif
