/* Max pooling's row kernels (pool.h), written once in plain C and
 * instantiated per path, so that the compiler vectorises them at the path's
 * width: lanes are independent outputs and each lane sees its taps in the
 * given order, so the width cannot change a bit. */
#ifndef SB_POOL_TEMPLATE_H
#define SB_POOL_TEMPLATE_H

#include <stdint.h>
#include "isa/pool.h"

/* take(best, v) as two single-comparison selects, which GCC 12 vectorises
 * in a chain of taps (two comparisons or-ed it does not): v when it is
 * greater than best, or when best is NaN; best when v is NaN. Which NaN a
 * window of only NaN taps holds is not defined here: the callers store every
 * NaN result as 0x7FC00000. */
static inline float pool_take(float best, float v)
{
    float w = v != v ? best : v;
    return w <= best ? best : w;
}

static inline float pool_canonical(float m)
{
    union { uint32_t u; float f; } nan = {0x7fc00000u};
    return m != m ? nan.f : m;
}

/* Outputs in blocks of POOL_BLOCK, a loop of constant length that the
 * compiler turns into whole vectors; the last, partial block is the block
 * ending at b, computed again over outputs already written (the same values:
 * each output is a function of its taps alone), rather than a scalar tail
 * as long as the vector loop on short rows. Rows shorter than a block run
 * one output at a time. */
#define POOL_BLOCK 16
#define POOL_OUTPUTS(ONE)                                                                    \
    size_t ox = a;                                                                           \
    for (; ox + POOL_BLOCK <= b; ox += POOL_BLOCK)                                           \
        for (size_t j = ox; j < ox + POOL_BLOCK; ++j) { ONE(j) }                             \
    if (ox < b) {                                                                            \
        if (b - a >= POOL_BLOCK)                                                             \
            for (size_t j = b - POOL_BLOCK; j < b; ++j) { ONE(j) }                           \
        else                                                                                 \
            for (size_t j = ox; j < b; ++j) { ONE(j) }                                       \
    }
#define POOL_TAPS9(j)                                                                        \
    float m = t0[j];                                                                         \
    m = pool_take(m, t1[j]), m = pool_take(m, t2[j]), m = pool_take(m, t3[j]);               \
    m = pool_take(m, t4[j]), m = pool_take(m, t5[j]), m = pool_take(m, t6[j]);               \
    m = pool_take(m, t7[j]), m = pool_take(m, t8[j]);                                        \
    best[j] = pool_canonical(m);
#define POOL_TAPS4(j)                                                                        \
    float m = t0[j];                                                                         \
    m = pool_take(m, t1[j]), m = pool_take(m, t2[j]), m = pool_take(m, t3[j]);               \
    best[j] = pool_canonical(m);

#define POOL_DEFINE(isa)                                                                     \
    static void sb_max_pass_##isa(float *restrict best, const float *restrict src, size_t n) \
    {                                                                                        \
        for (size_t i = 0; i < n; ++i) best[i] = pool_take(best[i], src[i]);                 \
    }                                                                                        \
    static void sb_max_taps9_##isa(const float *const *t, float *restrict best, size_t a,    \
                                   size_t b)                                                 \
    {                                                                                        \
        const float *restrict t0 = t[0], *restrict t1 = t[1], *restrict t2 = t[2];           \
        const float *restrict t3 = t[3], *restrict t4 = t[4], *restrict t5 = t[5];           \
        const float *restrict t6 = t[6], *restrict t7 = t[7], *restrict t8 = t[8];           \
        POOL_OUTPUTS(POOL_TAPS9)                                                             \
    }                                                                                        \
    static void sb_max_taps4_##isa(const float *const *t, float *restrict best, size_t a,    \
                                   size_t b)                                                 \
    {                                                                                        \
        const float *restrict t0 = t[0], *restrict t1 = t[1], *restrict t2 = t[2];           \
        const float *restrict t3 = t[3];                                                     \
        POOL_OUTPUTS(POOL_TAPS4)                                                             \
    }                                                                                        \
    const sb_pool_config sb_pool_config_##isa = {                                            \
        sb_max_pass_##isa, sb_max_taps9_##isa, sb_max_taps4_##isa};

#endif
