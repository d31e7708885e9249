/* tan, asin, acos, atan, sinh, cosh, asinh, acosh and atanh of a float32
 * (ONNX's Tan ... Atanh; docs/exact-ops.md, "More functions"): each computed
 * in binary64 from IEEE operations (+, -, *, /, sqrt) and the library's own
 * binary64 exp, expm1, log, sin and cos (transcendental.h, trig.h), never
 * the C library's, then rounded once to float32. So the bits are the same on
 * every machine and path; within 1 ulp of the true value on the tested
 * inputs, but, unlike exp or sin, not proven correctly rounded. NaN in,
 * NaN out (0x7FC00000); outside the domain (|x| > 1 for asin, acos and
 * atanh, x < 1 for acosh), NaN; the odd functions keep the sign of a zero. */
#ifndef SB_INVERSE_TRIG_H
#define SB_INVERSE_TRIG_H

#include <math.h>   /* sqrt: IEEE's correctly rounded square root (-fno-math-errno) */
#include "math/transcendental.h"
#include "math/trig.h"

#define SBT_PI_OVER_2 1.5707963267948966
#define SBT_PI 3.141592653589793

static inline float sbt_with_sign(double magnitude, float x)
{
    uint32_t sign = sbt_bits32(x) & 0x80000000u;
    return sbt_float(sbt_bits32((float)magnitude) | sign);
}

static inline float sbt_nan_or(float y)
{
    return y != y ? sbt_float(SB_CANONICAL_NAN_BITS) : y;
}

/* atan(a) for a >= 0 (+inf included): 1/a above 1, then three halvings
 * t -> t / (1 + sqrt(1 + t t)) to t <= tan(pi/32), the series to t^19 by
 * Horner's rule in t^2, times 8; pi/2 minus it above 1. */
static inline double sbt_atan_abs_double(double a)
{
    int inverted = a > 1.0;
    double t = inverted ? 1.0 / a : a;
    for (int i = 0; i < 3; ++i) t = t / (1.0 + sqrt(1.0 + t * t));
    double z = t * t, p = -1.0 / 19.0;
    static const double c[9] = {1.0, -1.0 / 3.0, 1.0 / 5.0, -1.0 / 7.0, 1.0 / 9.0, -1.0 / 11.0,
                                1.0 / 13.0, -1.0 / 15.0, 1.0 / 17.0};
    for (int i = 8; i >= 0; --i) p = p * z + c[i];
    double r = 8.0 * (t * p);
    return inverted ? SBT_PI_OVER_2 - r : r;
}

static inline float sb_fn_atan(float x)
{
    double a = (double)sbt_float(sbt_bits32(x) & 0x7fffffffu);
    return sbt_nan_or(sbt_with_sign(sbt_atan_abs_double(a), x));
}

/* asin(x) = atan(|x| / sqrt((1 - |x|)(1 + |x|))): the product exact in binary64. */
static inline float sb_fn_asin(float x)
{
    double a = (double)sbt_float(sbt_bits32(x) & 0x7fffffffu);
    if (!(a <= 1.0)) return sbt_float(SB_CANONICAL_NAN_BITS);
    return sbt_with_sign(sbt_atan_abs_double(a / sqrt((1.0 - a) * (1.0 + a))), x);
}

/* acos(x) = 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near 1. */
static inline float sb_fn_acos(float x)
{
    double d = (double)x;
    if (!(d >= -1.0 && d <= 1.0)) return sbt_float(SB_CANONICAL_NAN_BITS);
    return (float)(2.0 * sbt_atan_abs_double(sqrt((1.0 - d) / (1.0 + d))));
}

/* tan(x) = sin(|x|) / cos(|x|) with the library's binary64 sin and cos (its
 * own argument reduction), the sign of x. */
static inline float sb_fn_tan(float x)
{
    if (x - x != 0.0f) return sbt_float(SB_CANONICAL_NAN_BITS);   /* +-inf, NaN */
    double t = sbt_sin_cos_abs(x, 0) / sbt_sin_cos_abs(x, 1);      /* tan(|x|) */
    uint32_t bits = sbt_bits32((float)t) ^ (sbt_bits32(x) & 0x80000000u);
    return sbt_nan_or(sbt_float(bits));
}

/* sinh(|x|) = (m + m / (m + 1)) / 2, m = e^|x| - 1 (no cancellation). */
static inline float sb_fn_sinh(float x)
{
    double a = (double)sbt_float(sbt_bits32(x) & 0x7fffffffu);
    double m = sbt_expm1_double(a > 100.0 ? 100.0 : a);
    return sbt_nan_or(sbt_with_sign(0.5 * (m + m / (m + 1.0)), x));
}

/* cosh(x) = (e + 1 / e) / 2, e = e^|x|. */
static inline float sb_fn_cosh(float x)
{
    double a = (double)sbt_float(sbt_bits32(x) & 0x7fffffffu);
    double e = sbt_exp_double(a > 100.0 ? 100.0 : a);
    return sbt_nan_or((float)(0.5 * (e + 1.0 / e)));
}

/* asinh(|x|): below 1/16 the series to |x|^11, else log(|x| + sqrt(x x + 1)). */
static inline float sb_fn_asinh(float x)
{
    double a = (double)sbt_float(sbt_bits32(x) & 0x7fffffffu), r;
    if (a < 0.0625) {
        static const double c[6] = {1.0, -1.0 / 6.0, 3.0 / 40.0, -15.0 / 336.0, 105.0 / 3456.0,
                                    -945.0 / 42240.0};
        double z = a * a, p = c[5];
        for (int i = 4; i >= 0; --i) p = p * z + c[i];
        r = a * p;
    } else {
        r = a < 0x1p1000 ? sbt_log_double(a + sqrt(a * a + 1.0)) : a;   /* (+inf: a) */
    }
    return sbt_nan_or(sbt_with_sign(r, x));
}

/* acosh(x) = log(x + sqrt((x - 1)(x + 1))), the product exact in binary64. */
static inline float sb_fn_acosh(float x)
{
    double d = (double)x;
    if (!(d >= 1.0)) return sbt_float(SB_CANONICAL_NAN_BITS);
    if (d == 1.0) return 0.0f;
    if (d > 0x1p1000) return x;                                        /* +inf */
    return (float)sbt_log_double(d + sqrt((d - 1.0) * (d + 1.0)));
}

/* atanh(|x|): below 1/16 the series to |x|^13, else log((1 + |x|) / (1 - |x|)) / 2. */
static inline float sb_fn_atanh(float x)
{
    double a = (double)sbt_float(sbt_bits32(x) & 0x7fffffffu), r;
    if (!(a <= 1.0)) return sbt_float(SB_CANONICAL_NAN_BITS);
    if (a == 1.0) {
        r = sbt_double(0x7ff0000000000000u);   /* +inf */
    } else if (a < 0.0625) {
        double z = a * a, p = 1.0 / 13.0;
        for (int k = 11; k >= 1; k -= 2) p = p * z + 1.0 / (double)k;
        r = a * p;
    } else {
        r = 0.5 * sbt_log_double((1.0 + a) / (1.0 - a));
    }
    return sbt_with_sign(r, x);
}

#endif
