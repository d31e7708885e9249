/* float16 and bfloat16 as the graph runtime stores them (docs/onnx.md,
 * "float16 and bfloat16"): a value of a narrow type is a float32 holding a
 * value of that type, each result rounded to it once, to nearest with ties
 * to even; beyond the range: inf; NaN: 0x7FC00000. The bits of the narrow
 * type are made and read only at a model's inputs and outputs. Plain C on
 * the bits: the same everywhere. */
#ifndef SB_MATH_NARROW_FLOAT_H
#define SB_MATH_NARROW_FLOAT_H

#include <stdint.h>
#include <string.h>

static inline uint32_t sb_nf_bits(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

static inline float sb_nf_float(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}

/* The float16 value nearest x (ties to even), as a float32. */
static inline float sb_round_to_float16(float x)
{
    uint32_t b = sb_nf_bits(x), sign = b & 0x80000000u, a = b & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return sb_nf_float(0x7FC00000u);
    if (a >= 0x477FF000u) return sb_nf_float(sign | 0x7F800000u);   /* >= 65520: inf */
    if (a < 0x38800000u) {
        /* below 2^-14, float16's subnormals: multiples of 2^-24. Adding 0.5
         * (whose float32 ulp is 2^-24) rounds to one; the subtraction is exact */
        float t = sb_nf_float(a) + 0.5f;
        return sb_nf_float(sign | sb_nf_bits(t - 0.5f));
    }
    a += 0x0FFFu + ((a >> 13) & 1u);   /* 10 bits of mantissa, ties to even */
    return sb_nf_float(sign | (a & 0xFFFFE000u));
}

/* The bfloat16 value nearest x (ties to even), as a float32. */
static inline float sb_round_to_bfloat16(float x)
{
    uint32_t b = sb_nf_bits(x);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) return sb_nf_float(0x7FC00000u);
    b += 0x7FFFu + ((b >> 16) & 1u);
    return sb_nf_float(b & 0xFFFF0000u);
}

/* A float32 holding a float16 value, as its 16 bits (x rounded first). */
static inline uint16_t sb_float16_bits(float x)
{
    uint32_t b = sb_nf_bits(sb_round_to_float16(x)), sign = (b >> 16) & 0x8000u, a = b & 0x7FFFFFFFu;
    if (a > 0x7F800000u) return 0x7E00u;
    if (a == 0x7F800000u) return (uint16_t)(sign | 0x7C00u);
    if (a < 0x38800000u) {   /* subnormal (or zero): a multiple of 2^-24 */
        float m = sb_nf_float(a) * 16777216.0f;   /* exact: the count of 2^-24 */
        return (uint16_t)(sign | (uint32_t)m);
    }
    return (uint16_t)(sign | (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3FFu));
}

static inline uint16_t sb_bfloat16_bits(float x)
{
    uint32_t b = sb_nf_bits(sb_round_to_bfloat16(x));
    return (uint16_t)(b >> 16);
}

/* A float16 / bfloat16 value from its bits, exactly. */
static inline float sb_float16_value(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F) return sb_nf_float(m ? 0x7FC00000u : (sign | 0x7F800000u));
    if (e) return sb_nf_float(sign | ((e + 112u) << 23) | (m << 13));
    return sb_nf_float(sign | sb_nf_bits((float)m * 5.9604644775390625e-8f));   /* m * 2^-24, exact */
}

static inline float sb_bfloat16_value(uint16_t h)
{
    uint32_t b = (uint32_t)h << 16;
    if ((b & 0x7FFFFFFFu) > 0x7F800000u) b = 0x7FC00000u;
    return sb_nf_float(b);
}

#endif
