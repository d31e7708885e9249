/* Max pooling's row kernels (pool.h), written once in plain C and
 * instantiated per path, so that the compiler vectorises them at the path's
 * width: lanes are independent outputs and each lane sees its taps in the
 * given order, so the width cannot change a bit. */
#ifndef SB_POOL_TEMPLATE_H
#define SB_POOL_TEMPLATE_H

#include <stdint.h>
#include <string.h>
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

/* first(best, v): v when it is greater than best, else best (a NaN v, or
 * one equal to best, changes nothing). best never NaN: the first tap enters
 * as first(-inf, tap). From -inf it gives take's result wherever that is
 * above -inf (the first of the largest non-NaN taps); a window whose taps
 * are all NaN, or whose largest is -inf, gives -inf, and the caller folds
 * those outputs again with take (kernels/maxpool.c). One max instruction
 * on x86 (maxps is exactly this select), a compare and a select elsewhere. */
static inline float pool_first(float best, float v) { return v > best ? v : best; }
static inline float pool_first_tap(float v) { return pool_first(-__builtin_inff(), v); }

static inline float pool_canonical(float m)
{
    union { uint32_t u; float f; } nan = {0x7fc00000u};
    return m != m ? nan.f : m;
}

/* Outputs in blocks of B (16, or 8 or 4 for rows shorter than 16), a loop
 * of constant length that the compiler turns into whole vectors; the last,
 * partial block is the block ending at n, computed again over outputs
 * already written (the same values: each output is a function of its taps
 * alone), rather than a scalar tail as long as the vector loop on short
 * rows. Rows shorter than 4 run one output at a time. BLOCK(j0, B, ARG)
 * computes outputs [j0, j0 + B); POOL_EACH runs ARG(j) for each of them. */
#define POOL_RUN(B, BLOCK, ARG)                                                              \
    for (size_t j0 = 0;; j0 += B) {                                                          \
        if (j0 + B > n) j0 = n - B;                                                          \
        BLOCK(j0, B, ARG)                                                                    \
        if (j0 + B == n) break;                                                              \
    }
#define POOL_EACH(j0, B, ONE) for (size_t j = j0; j < j0 + B; ++j) { ONE(j) }
#define POOL_BLOCKS(ONE)                                                                     \
    if (n >= 16) {                                                                           \
        POOL_RUN(16, POOL_EACH, ONE)                                                         \
    } else if (n >= 8) {                                                                     \
        POOL_RUN(8, POOL_EACH, ONE)                                                          \
    } else if (n >= 4) {                                                                     \
        POOL_RUN(4, POOL_EACH, ONE)                                                          \
    } else {                                                                                 \
        for (size_t j = 0; j < n; ++j) { ONE(j) }                                            \
    }

/* Unit column stride: tap kx of output j is row[j + kx]. The take folds,
 * then the first folds (pool_first). */
#define POOL_H2S1(j) h[j] = pool_take(row[j], row[j + 1]);
#define POOL_H3S1(j) h[j] = pool_take(pool_take(row[j], row[j + 1]), row[j + 2]);
#define POOL_F2S1(j) h[j] = pool_first(pool_first_tap(row[j]), row[j + 1]);
#define POOL_F3S1(j) h[j] = pool_first(pool_first(pool_first_tap(row[j]), row[j + 1]), row[j + 2]);

/* The first folds over blocks of 16 written with vector types: as scalar
 * selects in a block GCC 12 turned each into a scalar max instruction,
 * which its block vectorizer then left alone. Rows shorter than 16 run one
 * output at a time. */
typedef float pool_f16 __attribute__((vector_size(64)));
typedef int32_t pool_i16 __attribute__((vector_size(64)));
/* (macros, not functions: a function taking or giving a 64-byte vector
 * has an ABI that depends on the flags, and GCC warns of it) */
#define POOL_NINF16                                                                          \
    ((pool_f16){-__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff(), \
                -__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff(), \
                -__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff(), \
                -__builtin_inff(), -__builtin_inff(), -__builtin_inff(), -__builtin_inff()})
#define pool_vfirst(best, v)                                                                 \
    ({                                                                                       \
        pool_f16 b_ = (best), v_ = (v);                                                      \
        pool_i16 gt_ = v_ > b_;                                                              \
        (pool_f16)((gt_ & (pool_i16)v_) | (~gt_ & (pool_i16)b_));                            \
    })
#define pool_vload(p)                                                                        \
    ({                                                                                       \
        pool_f16 l_;                                                                         \
        memcpy(&l_, (p), sizeof l_);                                                         \
        l_;                                                                                  \
    })
#define pool_vfirst_tap(v) pool_vfirst(POOL_NINF16, (v))
#define POOL_VF2S1(j0, B, ARG)                                                               \
    {                                                                                        \
        pool_f16 v = pool_vfirst(pool_vfirst_tap(pool_vload(row + j0)), pool_vload(row + j0 + 1)); \
        memcpy(h + j0, &v, sizeof v);                                                        \
    }
#define POOL_VF3S1(j0, B, ARG)                                                               \
    {                                                                                        \
        pool_f16 v = pool_vfirst(pool_vfirst(pool_vfirst_tap(pool_vload(row + j0)),          \
                                             pool_vload(row + j0 + 1)),                      \
                                 pool_vload(row + j0 + 2));                                  \
        memcpy(h + j0, &v, sizeof v);                                                        \
    }
/* The column folds' blocks: each output also or-ed into `ninf` where it
 * is -inf (for the caller's second fold with take). */
#define POOL_VSTORE_FLAG(j0, v)                                                              \
    {                                                                                        \
        pool_f16 s_ = (v);                                                                   \
        ninf |= s_ == POOL_NINF16;                                                           \
        memcpy(best + j0, &s_, sizeof s_);                                                   \
    }
#define POOL_VW1(j0, B, ARG) POOL_VSTORE_FLAG(j0, pool_vload(r0 + j0))
#define POOL_VW2(j0, B, ARG) POOL_VSTORE_FLAG(j0, pool_vfirst(pool_vload(r0 + j0), pool_vload(r1 + j0)))
#define POOL_VW3(j0, B, ARG)                                                                 \
    POOL_VSTORE_FLAG(j0, pool_vfirst(pool_vfirst(pool_vload(r0 + j0), pool_vload(r1 + j0)),  \
                                     pool_vload(r2 + j0)))
#define POOL_VPASS(j0, B, ARG) POOL_VSTORE_FLAG(j0, pool_vfirst(pool_vload(best + j0), pool_vload(src + j0)))
#define POOL_FIRST_BLOCKS(VBLOCK, ONE)                                                       \
    if (n >= 16) {                                                                           \
        POOL_RUN(16, VBLOCK, 0)                                                              \
    } else {                                                                                 \
        for (size_t j = 0; j < n; ++j) { ONE(j) }                                            \
    }
/* A column fold's body: its blocks, then whether any output is -inf. */
#define POOL_FIRST_COLUMN(VBLOCK, ONE)                                                       \
    pool_i16 ninf = {0};                                                                     \
    int ninf_short = 0;                                                                      \
    if (n >= 16) {                                                                           \
        POOL_RUN(16, VBLOCK, 0)                                                              \
    } else {                                                                                 \
        for (size_t j = 0; j < n; ++j) {                                                     \
            ONE(j)                                                                           \
            ninf_short |= best[j] == -__builtin_inff();                                      \
        }                                                                                    \
    }                                                                                        \
    for (int l_ = 0; l_ < 16; ++l_) ninf_short |= ninf[l_] != 0;                             \
    return ninf_short;

/* Column stride 2: tap kx of output j is row[2j + kx]. A block of 16
 * outputs loads its 32 (or 33) columns as whole vectors and takes the even
 * and odd ones apart with shuffles; the third tap is the even columns moved
 * down one, the next even column entering at the top. (Written as plain
 * strided reads, GCC 12 built the third tap from scalar inserts.) The fold
 * then reads the three as contiguous lanes. */
typedef float pool_v16 __attribute__((vector_size(64)));
#define POOL_S2_BLOCK16(j0, B, KW) POOL_S2_BLOCK16_WITH(j0, KW, pool_take, )
#define POOL_S2_FIRST16(j0, B, KW) POOL_S2_BLOCK16_WITH(j0, KW, pool_first, pool_first_tap)
#define POOL_S2_BLOCK16_WITH(j0, KW, FOLD, START)                                            \
    {                                                                                        \
        pool_v16 lo, hi;                                                                     \
        memcpy(&lo, row + 2 * j0, sizeof lo);                                                \
        memcpy(&hi, row + 2 * j0 + 16, sizeof hi);                                           \
        pool_v16 ev = __builtin_shufflevector(lo, hi, 0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, \
                                              22, 24, 26, 28, 30);                           \
        pool_v16 od = __builtin_shufflevector(lo, hi, 1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, \
                                              23, 25, 27, 29, 31);                           \
        float tap0[16], tap1[16], tap2[16];                                                  \
        memcpy(tap0, &ev, sizeof ev);                                                        \
        memcpy(tap1, &od, sizeof od);                                                        \
        if (KW == 3) {                                                                       \
            pool_v16 top = {row[2 * j0 + 32]};                                               \
            pool_v16 nx = __builtin_shufflevector(ev, top, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,    \
                                                  11, 12, 13, 14, 15, 16);                   \
            memcpy(tap2, &nx, sizeof nx);                                                    \
        }                                                                                    \
        for (size_t t = 0; t < 16; ++t) {                                                    \
            float m = FOLD(START(tap0[t]), tap1[t]);                                         \
            h[j0 + t] = KW == 3 ? FOLD(m, tap2[t]) : m;                                      \
        }                                                                                    \
    }
/* Blocks of 16 outputs; rows shorter than 16 one output at a time (in
 * blocks of 8, or copied into a block's room, they ran slower: the next
 * read of outputs written by two overlapping stores, or of the copy, waits
 * for the stores to reach the cache). */
#define POOL_S2(KW, BLOCK, FOLD, START)                                                      \
    if (n >= 16) {                                                                           \
        POOL_RUN(16, BLOCK, KW)                                                              \
        return;                                                                              \
    }                                                                                        \
    for (size_t j = 0; j < n; ++j) {                                                         \
        float m = FOLD(START(row[2 * j]), row[2 * j + 1]);                                   \
        h[j] = KW == 3 ? FOLD(m, row[2 * j + 2]) : m;                                        \
    }
#define POOL_HFOLD_S2(isa, name, KW)                                                         \
    static void sb_max_##name##_##isa(const float *row, float *h, size_t n)                  \
    {                                                                                        \
        POOL_S2(KW, POOL_S2_BLOCK16, pool_take, )                                            \
    }
#define POOL_FIRST_S2(isa, name, KW)                                                         \
    static void sb_max_##name##_##isa(const float *row, float *h, size_t n)                  \
    {                                                                                        \
        POOL_S2(KW, POOL_S2_FIRST16, pool_first, pool_first_tap)                             \
    }

/* The column folds. */
#define POOL_V1(j) best[j] = pool_canonical(r0[j]);
#define POOL_V2(j) best[j] = pool_canonical(pool_take(r0[j], r1[j]));
#define POOL_V3(j) best[j] = pool_canonical(pool_take(pool_take(r0[j], r1[j]), r2[j]));
/* Rows of first folds hold no NaN: no canonical store. */
#define POOL_W1(j) best[j] = r0[j];
#define POOL_W2(j) best[j] = pool_first(r0[j], r1[j]);
#define POOL_W3(j) best[j] = pool_first(pool_first(r0[j], r1[j]), r2[j]);
#define POOL_P1(j) best[j] = pool_first(best[j], src[j]);

#define POOL_HFOLD(isa, name, ONE)                                                           \
    static void sb_max_##name##_##isa(const float *restrict row, float *restrict h, size_t n)\
    {                                                                                        \
        POOL_BLOCKS(ONE)                                                                     \
    }

#define POOL_DEFINE(isa)                                                                     \
    static void sb_max_pass_##isa(float *restrict best, const float *restrict src, size_t n) \
    {                                                                                        \
        for (size_t i = 0; i < n; ++i) best[i] = pool_take(best[i], src[i]);                 \
    }                                                                                        \
    POOL_HFOLD(isa, h2s1, POOL_H2S1)                                                         \
    POOL_HFOLD_S2(isa, h2s2, 2)                                                              \
    POOL_HFOLD(isa, h3s1, POOL_H3S1)                                                         \
    POOL_HFOLD_S2(isa, h3s2, 3)                                                              \
    static void sb_max_v1_##isa(const float *const *rows, float *restrict best, size_t n)    \
    {                                                                                        \
        const float *restrict r0 = rows[0];                                                  \
        POOL_BLOCKS(POOL_V1)                                                                 \
    }                                                                                        \
    static void sb_max_v2_##isa(const float *const *rows, float *restrict best, size_t n)    \
    {                                                                                        \
        const float *restrict r0 = rows[0], *restrict r1 = rows[1];                          \
        POOL_BLOCKS(POOL_V2)                                                                 \
    }                                                                                        \
    static void sb_max_v3_##isa(const float *const *rows, float *restrict best, size_t n)    \
    {                                                                                        \
        const float *restrict r0 = rows[0], *restrict r1 = rows[1], *restrict r2 = rows[2];  \
        POOL_BLOCKS(POOL_V3)                                                                 \
    }                                                                                        \
    static int sb_max_first_pass_##isa(float *restrict best, const float *restrict src,      \
                                       size_t n)                                             \
    {                                                                                        \
        POOL_FIRST_COLUMN(POOL_VPASS, POOL_P1)                                               \
    }                                                                                        \
    static void sb_max_f2s1_##isa(const float *restrict row, float *restrict h, size_t n)    \
    {                                                                                        \
        POOL_FIRST_BLOCKS(POOL_VF2S1, POOL_F2S1)                                             \
    }                                                                                        \
    POOL_FIRST_S2(isa, f2s2, 2)                                                              \
    static void sb_max_f3s1_##isa(const float *restrict row, float *restrict h, size_t n)    \
    {                                                                                        \
        POOL_FIRST_BLOCKS(POOL_VF3S1, POOL_F3S1)                                             \
    }                                                                                        \
    POOL_FIRST_S2(isa, f3s2, 3)                                                              \
    static int sb_max_w1_##isa(const float *const *rows, float *restrict best, size_t n)     \
    {                                                                                        \
        const float *restrict r0 = rows[0];                                                  \
        POOL_FIRST_COLUMN(POOL_VW1, POOL_W1)                                                 \
    }                                                                                        \
    static int sb_max_w2_##isa(const float *const *rows, float *restrict best, size_t n)     \
    {                                                                                        \
        const float *restrict r0 = rows[0], *restrict r1 = rows[1];                          \
        POOL_FIRST_COLUMN(POOL_VW2, POOL_W2)                                                 \
    }                                                                                        \
    static int sb_max_w3_##isa(const float *const *rows, float *restrict best, size_t n)     \
    {                                                                                        \
        const float *restrict r0 = rows[0], *restrict r1 = rows[1], *restrict r2 = rows[2];  \
        POOL_FIRST_COLUMN(POOL_VW3, POOL_W3)                                                 \
    }                                                                                        \
    const sb_pool_config sb_pool_config_##isa = {                                            \
        sb_max_pass_##isa,                                                                   \
        {{sb_max_h2s1_##isa, sb_max_h2s2_##isa}, {sb_max_h3s1_##isa, sb_max_h3s2_##isa}},    \
        {sb_max_v1_##isa, sb_max_v2_##isa, sb_max_v3_##isa},                                 \
        sb_max_first_pass_##isa,                                                             \
        {{sb_max_f2s1_##isa, sb_max_f2s2_##isa}, {sb_max_f3s1_##isa, sb_max_f3s2_##isa}},    \
        {sb_max_w1_##isa, sb_max_w2_##isa, sb_max_w3_##isa}};

#endif
