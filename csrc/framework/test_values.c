/* The portable test-value generator of docs/test-values.md. Everything is
 * 32-bit integer arithmetic, so a port to any language reproduces it. */
#include "samebits.h"

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

static const uint32_t special_bits[8] = {
    0x7fc00000u, /* quiet NaN */
    0xffc00001u, /* negative NaN with a payload: exact mode must canonicalize it */
    0x7f800000u, /* +inf */
    0xff800000u, /* -inf */
    0x00000000u, /* +0 */
    0x80000000u, /* -0 */
    0x00000001u, /* smallest subnormal */
    0x80234567u, /* a negative subnormal */
};

static float from_bits(uint32_t u)
{
    union { uint32_t u; float f; } v = {u};
    return v.f;
}

void sb_fill_test_values(float *dst, size_t count, uint32_t seed, uint32_t nspecial)
{
    for (size_t i = 0; i < count; ++i) {
        uint32_t u = mix32(mix32((uint32_t)i) ^ seed);
        /* 24 random bits as a multiple of 2^-23 in [-1, 1): exact in binary32 */
        float x = (float)(int32_t)((u >> 8) - 0x800000u) * 0x1p-23f;
        if ((u & 0xffu) < 8u) x *= 0x1p-64f; /* 1 in 32 is tiny: tiny x tiny is subnormal */
        dst[i] = x;
    }
    if (count == 0) return;
    for (uint32_t s = 0; s < nspecial; ++s) {
        uint32_t pos = mix32(seed + 0x9e3779b9u * (s + 1u)) % (uint32_t)count;
        dst[pos] = from_bits(special_bits[s % 8u]);
    }
}
