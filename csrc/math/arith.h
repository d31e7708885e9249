/* The elementwise arithmetic of two float32 operands (docs/exact-ops.md,
 * "Arithmetic"), one element pair at a time: used by binary.c's broadcasting
 * loops. add, sub, mul, div are single IEEE float32 operations; maximum and
 * minimum propagate NaN and order -0 below +0; pow follows C99's special
 * cases, takes integer exponents by repeated products in binary64 and other
 * exponents through the exact log and exp. Every NaN result is 0x7FC00000. */
#ifndef SB_ARITH_H
#define SB_ARITH_H

#include "samebits.h"
#include "math/activation.h"

/* The operation codes: enum sb_binary_op of samebits.h (tools/make_tables.py). */

static inline float sb_bin_add(float a, float b) { return sbt_canonical(a + b); }
static inline float sb_bin_sub(float a, float b) { return sbt_canonical(a - b); }
static inline float sb_bin_mul(float a, float b) { return sbt_canonical(a * b); }
static inline float sb_bin_div(float a, float b) { return sbt_canonical(a / b); }

/* The larger; NaN if either is NaN; of -0 and +0, +0. On the bits: for two
 * zeros the AND of their bits keeps the sign only when both are -0. */
static inline float sb_bin_maximum(float a, float b)
{
    float m = a > b ? a : b;
    uint32_t zeros = sbt_bits32(a) & sbt_bits32(b);
    m = (a == b) ? sbt_float(zeros) : m;  /* equal: the same value, or -0 and +0 */
    return (a != a || b != b) ? sbt_float(SB_CANONICAL_NAN_BITS) : m;
}

/* The smaller; NaN if either is NaN; of -0 and +0, -0 (the OR of the bits). */
static inline float sb_bin_minimum(float a, float b)
{
    float m = a < b ? a : b;
    uint32_t zeros = sbt_bits32(a) | sbt_bits32(b);
    m = (a == b) ? sbt_float(zeros) : m;
    return (a != a || b != b) ? sbt_float(SB_CANONICAL_NAN_BITS) : m;
}

/* x^n for an integer 0 <= n < 2^(bits) in binary64: `bits` rounds of
 * square-and-multiply from the lowest bit, r = 1, then for each bit i:
 * r = r * p when bit i of n is set, p = p * p. Rounds past n's highest set
 * bit leave r as it is, so any bits from n's bit length to 24 give the same r. */
static inline double sbt_pow_integer_bits(double x, uint32_t n, int bits)
{
    double r = 1.0, p = x;
    for (int i = 0; i < bits; ++i) {
        r = (n >> i) & 1u ? r * p : r;
        p = p * p;
    }
    return r;
}

/* Whether ay = |y| is an integer below 2^24, the exponents of step 1 (every
 * float32 of magnitude >= 2^24 is an even integer). NaN is not: the
 * comparison fails before the conversion. */
static inline int sbt_pow_small_integer(float ay)
{
    return ay < 16777216.0f && (float)(int32_t)ay == ay;
}

/* pow's step 1: X^n in `bits` rounds, then one divide for a negative y. */
static inline double sbt_pow_step1(double X, float y, uint32_t n, int bits)
{
    const double r = sbt_pow_integer_bits(X, n, bits);
    return y < 0.0f ? 1.0 / r : r;
}

/* pow's step 3 (docs/exact-ops.md): C99's special cases over r, the result
 * of step 1 (small_integer, with n = |y| and r_int its binary64 value) or
 * of step 2. */
static inline float sbt_pow_special(float x, float y, float r, int small_integer, uint32_t n,
                                    double r_int)
{
    const float inf = sbt_float(0x7f800000u);
    float ax = sbt_float(sbt_bits32(x) & 0x7fffffffu), ay = sbt_float(sbt_bits32(y) & 0x7fffffffu);
    /* The special cases of C99 Annex F (pow), in priority order (last wins). */
    int y_even_big = ay >= 16777216.0f && ay != inf;             /* even integers */
    r = ax == inf ? ((y > 0.0f) ? inf : 0.0f) : r;               /* |x| = inf, y not integer */
    r = (x == -inf && small_integer && (n & 1u)) ? (y > 0.0f ? -inf : -0.0f) : r;
    r = (x == 0.0f && !small_integer) ? (y > 0.0f ? 0.0f : inf) : r;
    r = (x == 0.0f && small_integer) ? (float)r_int : r;           /* signed zero kept */
    r = (x < 0.0f && !small_integer && !y_even_big && ax != inf)
            ? sbt_float(SB_CANONICAL_NAN_BITS) : r;               /* negative ^ non-integer */
    r = ay == inf ? (ax == 1.0f ? 1.0f : ((ax < 1.0f) == (y > 0.0f) ? 0.0f : inf)) : r;
    r = (x != x || y != y) ? sbt_float(SB_CANONICAL_NAN_BITS) : r;
    r = (x == 1.0f || y == 0.0f) ? 1.0f : r;                      /* even for NaN */
    return r;
}

/* pow's step 2: e^(y log|x|) in binary64, the product clamped to
 * [-200, 200] (beyond, the result rounds to 0 or inf anyway); a negative x
 * is handled by step 3. */
static inline double sbt_pow_general(float ax, double Y)
{
    double t = Y * sbt_log_double((double)ax);
    t = t < -200.0 ? -200.0 : t;
    t = t > 200.0 ? 200.0 : t;
    return sbt_exp_double(t);
}

static inline float sb_bin_pow(float x, float y)
{
    double X = (double)x, Y = (double)y;
    float ax = sbt_float(sbt_bits32(x) & 0x7fffffffu), ay = sbt_float(sbt_bits32(y) & 0x7fffffffu);
    /* y an integer below 2^24 in magnitude: step 1, all 24 rounds (a
     * vector's lanes may hold different exponents); otherwise step 2 */
    int small_integer = sbt_pow_small_integer(ay);
    uint32_t n = small_integer ? (uint32_t)(int32_t)ay : 0u;
    double r_int = sbt_pow_step1(X, y, n, 24);
    float r = (float)(small_integer ? r_int : sbt_pow_general(ax, Y));
    return sbt_pow_special(x, y, r, small_integer, n, r_int);
}

/* sb_bin_pow(x, y) for an exponent y that is not an integer of magnitude
 * below 2^24: step 2 alone, without step 1's rounds, which it discards. */
static inline float sb_bin_pow_noninteger(float x, float y)
{
    float ax = sbt_float(sbt_bits32(x) & 0x7fffffffu);
    return sbt_pow_special(x, y, (float)sbt_pow_general(ax, (double)y), 0, 0u, 0.0);
}

/* sb_bin_pow(x, y) for an exponent y that is an integer of magnitude
 * n = |y| < 2^bits (bits <= 24): step 1 in `bits` rounds (the same r, see
 * sbt_pow_integer_bits) and no step 2, whose result step 1 discards. A row
 * with one such exponent (x^2, x^3: a variance, an STFT's magnitude, GELU's
 * cube) takes this instead of both steps for every element (60 ns an
 * element on avx512). */
static inline float sb_bin_pow_integer(float x, float y, uint32_t n, int bits)
{
    const double r_int = sbt_pow_step1((double)x, y, n, bits);
    return sbt_pow_special(x, y, (float)r_int, 1, n, r_int);
}

/* The bit length of y's magnitude when y is an integer of magnitude below
 * 2^24 (0 for y = +-0), else -1: whether sb_bin_pow_integer applies. */
static inline int sb_pow_integer_bits(float y)
{
    float ay = sbt_float(sbt_bits32(y) & 0x7fffffffu);
    if (!sbt_pow_small_integer(ay)) return -1;
    int bits = 0;
    for (uint32_t n = (uint32_t)(int32_t)ay; n; n >>= 1) ++bits;
    return bits;
}

/* C's fmod of float32 values, exactly (the remainder x - trunc(x / y) * y
 * is always representable): long division of the two significands, one
 * exponent step at a time. The sign is x's; NaN (0x7FC00000) for y = +-0,
 * x = +-inf or a NaN operand; x itself when |x| < |y| (so for y = +-inf). */
static inline float sb_fmod32(float x, float y)
{
    uint32_t bx = sbt_bits32(x), by = sbt_bits32(y);
    uint32_t sign = bx & 0x80000000u, ax = bx & 0x7fffffffu, ay = by & 0x7fffffffu;
    if (ay == 0 || ay > 0x7f800000u || ax >= 0x7f800000u) return sbt_float(SB_CANONICAL_NAN_BITS);
    if (ax < ay) return x;
    if (ax == ay) return sbt_float(sign);
    /* value = m * 2^(e - 150), m in [2^23, 2^24) once subnormals are normalized */
    int ex = (int)(ax >> 23), ey = (int)(ay >> 23);
    uint32_t mx = ax & 0x7fffffu, my = ay & 0x7fffffu;
    if (ex) mx |= 0x800000u; else for (ex = 1; !(mx & 0x800000u); --ex) mx <<= 1;
    if (ey) my |= 0x800000u; else for (ey = 1; !(my & 0x800000u); --ey) my <<= 1;
    /* mx < 2 my throughout: subtract where it fits, then the next bit */
    for (; ex > ey; --ex) {
        if (mx >= my) mx -= my;
        if (mx == 0) return sbt_float(sign);
        mx <<= 1;
    }
    if (mx >= my) mx -= my;
    if (mx == 0) return sbt_float(sign);
    for (; !(mx & 0x800000u); --ex) mx <<= 1;
    /* a subnormal result is a multiple of y's last place: the shift is exact */
    uint32_t r = ex >= 1 ? ((uint32_t)ex << 23) | (mx & 0x7fffffu) : mx >> (1 - ex);
    return sbt_float(r | sign);
}

/* Python's (and numpy's) float modulo, ONNX Mod with fmod=0 (opset 28): the
 * exact fmod, then, when it is nonzero with a sign other than y's, plus y
 * (one float32 rounding); a zero result takes y's sign. */
static inline float sb_pymod32(float x, float y)
{
    float r = sb_fmod32(x, y);
    if (r != r) return r;
    if (r == 0.0f) return sbt_float(sbt_bits32(y) & 0x80000000u);
    if ((r < 0.0f) != (y < 0.0f)) r = r + y;
    return sbt_canonical(r);
}

#endif
