/* avx512 path: depthwise planes read in place (sb_dw_flat_fn, kernels.h).
 *
 * A depthwise layer at unit strides whose output map is its input's size
 * ("same" padding: MobileNet's 3x3 and 5x5 layers) has output j of a plane
 * read tap t at input j + off[t] of the same plane, for every j: one flat
 * offset per tap. So 16 consecutive outputs read 16 consecutive inputs, across
 * row ends too, and the padding is the lanes whose tap falls outside the
 * input, loaded as +0 by a masked load (a masked-out lane is never read, so a
 * tap before the plane's first float or past its last cannot fault). No
 * padded copy of the plane is built, and a 14-wide map fills the lanes.
 *
 * Each output is still its taps in increasing t from +0, one multiply and
 * one add each (one fused multiply-add in fast mode), padding taps
 * multiplying +0 as the padded rows' kernel does (an infinite weight there
 * still gives NaN): the same operations in the same order, so the same
 * bits. */
#include "isa/isa.h"

#if defined(__AVX512F__) && defined(__FMA__) && !defined(SB_EMULATE_AVX512)
#include <immintrin.h>
#include "isa/avx512/zmm_step.h"

/* Vectors of a plane in flight at once: independent chains. */
#define GROUP 8

/* CALL(G) over vectors [0, vecs): GROUP at a time, then the rest with G a
 * constant too, so that every group's loops unroll fully (CALL reads v0). */
#define FOR_GROUPS(vecs, CALL)                                                               \
    do {                                                                                     \
        size_t v0 = 0;                                                                       \
        for (; v0 + GROUP <= (vecs); v0 += GROUP) CALL(GROUP);                               \
        switch ((vecs) - v0) {                                                               \
        case 1: CALL(1); break;                                                              \
        case 2: CALL(2); break;                                                              \
        case 3: CALL(3); break;                                                              \
        case 4: CALL(4); break;                                                              \
        case 5: CALL(5); break;                                                              \
        case 6: CALL(6); break;                                                              \
        case 7: CALL(7); break;                                                              \
        default: break;                                                                      \
        }                                                                                    \
    } while (0)

/* Vectors v0 .. v0 + G - 1 of one plane. */
static inline __attribute__((always_inline)) void
dw_flat_group(const int G, size_t v0, size_t plane, size_t taps, const float *w,
              const ptrdiff_t *off, const uint16_t *masks, const float *in, float *out,
              const int fused)
{
    __m512 acc[GROUP];
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    const size_t vecs = (plane + 15) / 16;
    for (size_t t = 0; t < taps; ++t) {
        const __m512 a = _mm512_set1_ps(w[t]);
        /* one base per tap; the group's vectors and masks at constant offsets */
        const float *tap = in + off[t] + v0 * 16;
        const uint16_t *mask = masks + t * vecs + v0;
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) {
            const __m512 x = _mm512_maskz_loadu_ps((__mmask16)mask[g], tap + g * 16);
            acc[g] = zmm_step(acc[g], a, x, fused);
        }
    }
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
        const size_t j = (v0 + (size_t)g) * 16;
        if (j + 16 <= plane)
            _mm512_storeu_ps(out + j, zmm_canon(acc[g]));
        else
            _mm512_mask_storeu_ps(out + j, (__mmask16)((1u << (plane - j)) - 1u),
                                  zmm_canon(acc[g]));
    }
}

static inline __attribute__((always_inline)) void
dw_flat(size_t plane, size_t taps, const float *w, const ptrdiff_t *off, const uint16_t *masks,
        const float *in, float *out, const int fused)
{
    const size_t vecs = (plane + 15) / 16;
#define FLAT_GROUP(G) dw_flat_group(G, v0, plane, taps, w, off, masks, in, out, fused)
    FOR_GROUPS(vecs, FLAT_GROUP);
#undef FLAT_GROUP
}

/* Vectors v0 .. v0 + G - 1 of two planes: each tap's mask read once for
 * both, 2G independent sums. */
static inline __attribute__((always_inline)) void
dw_flat_pair_group(const int G, size_t v0, size_t plane, size_t taps, const float *w_a,
                   const float *w_b, const ptrdiff_t *off, const uint16_t *masks,
                   const float *in_a, const float *in_b, float *out_a, float *out_b,
                   const int fused)
{
    __m512 acc_a[GROUP], acc_b[GROUP];
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) acc_a[g] = acc_b[g] = _mm512_setzero_ps();
    const size_t vecs = (plane + 15) / 16;
    for (size_t t = 0; t < taps; ++t) {
        const __m512 a = _mm512_set1_ps(w_a[t]), b = _mm512_set1_ps(w_b[t]);
        const ptrdiff_t at = off[t] + (ptrdiff_t)(v0 * 16);
        const uint16_t *mask = masks + t * vecs + v0;
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g) {
            const __mmask16 m = (__mmask16)mask[g];
            acc_a[g] = zmm_step(acc_a[g], a, _mm512_maskz_loadu_ps(m, in_a + at + g * 16), fused);
            acc_b[g] = zmm_step(acc_b[g], b, _mm512_maskz_loadu_ps(m, in_b + at + g * 16), fused);
        }
    }
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
        const size_t j = (v0 + (size_t)g) * 16;
        const __mmask16 live = j + 16 <= plane ? (__mmask16)0xffff
                                               : (__mmask16)((1u << (plane - j)) - 1u);
        _mm512_mask_storeu_ps(out_a + j, live, zmm_canon(acc_a[g]));
        _mm512_mask_storeu_ps(out_b + j, live, zmm_canon(acc_b[g]));
    }
}

static inline __attribute__((always_inline)) void
dw_flat_pair(size_t plane, size_t taps, const float *w_a, const float *w_b, const ptrdiff_t *off,
             const uint16_t *masks, const float *in_a, const float *in_b, float *out_a,
             float *out_b, const int fused)
{
    const size_t vecs = (plane + 15) / 16;
#define PAIR_GROUP(G) dw_flat_pair_group(G, v0, plane, taps, w_a, w_b, off, masks, in_a, in_b, \
                                         out_a, out_b, fused)
    FOR_GROUPS(vecs, PAIR_GROUP);
#undef PAIR_GROUP
}

void sb_dw_flat_pair_avx512_exact(size_t plane, size_t taps, const float *w_a, const float *w_b,
                                  const ptrdiff_t *off, const uint16_t *masks, const float *in_a,
                                  const float *in_b, float *out_a, float *out_b)
{
    dw_flat_pair(plane, taps, w_a, w_b, off, masks, in_a, in_b, out_a, out_b, 0);
}

void sb_dw_flat_pair_avx512_fast(size_t plane, size_t taps, const float *w_a, const float *w_b,
                                 const ptrdiff_t *off, const uint16_t *masks, const float *in_a,
                                 const float *in_b, float *out_a, float *out_b)
{
    dw_flat_pair(plane, taps, w_a, w_b, off, masks, in_a, in_b, out_a, out_b, 1);
}

/* masks[t*vecs + v] for t = ky*kw + kx, vecs = ceil(h*w / 16): the lanes of
 * outputs j = 16v + l < h*w whose tap lies inside the input, input row
 * j / w + ky*dh - pad_top in [0, h) and column j % w + kx*dw - pad_left in
 * [0, w) (unsigned compares: a coordinate before the input wraps to a huge
 * value). Sizes below 2^31 (depthwise.c checks). */
void sb_dw_flat_masks_avx512(size_t h, size_t w, size_t kh, size_t kw, size_t dh, size_t dw,
                             size_t pad_top, size_t pad_left, uint16_t *masks)
{
    const size_t plane = h * w, vecs = (plane + 15) / 16;
    const __m512i hv = _mm512_set1_epi32((int)h), wv = _mm512_set1_epi32((int)w);
    const __m512i planev = _mm512_set1_epi32((int)plane), sixteen = _mm512_set1_epi32(16);
    const __m512i one = _mm512_set1_epi32(1);
    int first[16], rows[16];
    for (int l = 0; l < 16; ++l) first[l] = (int)((size_t)l % w), rows[l] = (int)((size_t)l / w);
    __m512i px = _mm512_loadu_si512(first), py = _mm512_loadu_si512(rows);
    __m512i j = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (size_t v = 0; v < vecs; ++v) {
        const __mmask16 live = _mm512_cmplt_epu32_mask(j, planev);
        for (size_t ky = 0; ky < kh; ++ky) {
            const __m512i y = _mm512_add_epi32(py, _mm512_set1_epi32((int)(ky * dh) - (int)pad_top));
            const __mmask16 row = live & _mm512_cmplt_epu32_mask(y, hv);
            for (size_t kx = 0; kx < kw; ++kx) {
                const __m512i x = _mm512_add_epi32(px, _mm512_set1_epi32((int)(kx * dw) -
                                                                         (int)pad_left));
                masks[(ky * kw + kx) * vecs + v] = (uint16_t)(row & _mm512_cmplt_epu32_mask(x, wv));
            }
        }
        /* the next 16 outputs: column + 16, less w (and row + 1) until inside */
        j = _mm512_add_epi32(j, sixteen), px = _mm512_add_epi32(px, sixteen);
        for (__mmask16 over; (over = _mm512_cmpge_epu32_mask(px, wv)) != 0;) {
            px = _mm512_mask_sub_epi32(px, over, px, wv);
            py = _mm512_mask_add_epi32(py, over, py, one);
        }
    }
}

/* Vectors v0 .. v0 + G - 1 of a pitched block (sb_dw_pitched_fn): every
 * tap's G loads at constant offsets from one address, then each vector's
 * stored lanes compressed to the front and written as one masked run. */
static inline __attribute__((always_inline)) void
dw_pitched_group(const int G, size_t v0, size_t limit, size_t taps, const float *w,
                 const ptrdiff_t *off, const float *in, const sb_dw_lane_map *map, float *out,
                 const int fused)
{
    __m512 acc[GROUP];
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    const float *base = in + v0 * 16;
    for (size_t t = 0; t < taps; ++t) {
        const __m512 a = _mm512_set1_ps(w[t]);
        const float *tap = base + off[t];
#pragma GCC unroll 8
        for (int g = 0; g < G; ++g)
            acc[g] = zmm_step(acc[g], a, _mm512_loadu_ps(tap + g * 16), fused);
    }
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
        const size_t v = v0 + (size_t)g, j = v * 16;
        unsigned mask = map[v].mask;
        if (j + 16 > limit) mask &= (1u << (limit - j)) - 1u;   /* limit > j: v < vecs */
        const __m512 packed = _mm512_maskz_compress_ps((__mmask16)mask, zmm_canon(acc[g]));
        _mm512_mask_storeu_ps(out + map[v].start,
                              (__mmask16)((1u << __builtin_popcount(mask)) - 1u), packed);
    }
}

static inline __attribute__((always_inline)) void
dw_pitched(size_t vecs, size_t limit, size_t taps, const float *w, const ptrdiff_t *off,
           const float *in, const sb_dw_lane_map *map, float *out, const int fused)
{
#define PITCHED_GROUP(G) dw_pitched_group(G, v0, limit, taps, w, off, in, map, out, fused)
    FOR_GROUPS(vecs, PITCHED_GROUP);
#undef PITCHED_GROUP
}

void sb_dw_pitched_avx512_exact(size_t vecs, size_t limit, size_t taps, const float *w,
                                const ptrdiff_t *off, const float *in, const sb_dw_lane_map *map,
                                float *out)
{
    dw_pitched(vecs, limit, taps, w, off, in, map, out, 0);
}

void sb_dw_pitched_avx512_fast(size_t vecs, size_t limit, size_t taps, const float *w,
                               const ptrdiff_t *off, const float *in, const sb_dw_lane_map *map,
                               float *out)
{
    dw_pitched(vecs, limit, taps, w, off, in, map, out, 1);
}

/* sb_split_stride2_fn: 32 floats of a row a step, two permutes across a
 * pair of registers; the last step's loads and stores masked to the row,
 * their masks made once for every row. Padded rows of 28-float input rows
 * (MobileNet's stride-2 depthwise layers) spent 38% of the layer splitting
 * four floats a step. */
void sb_split_stride2_avx512(float *even, float *odd, const float *in, size_t len, size_t rows,
                             ptrdiff_t in_step, ptrdiff_t out_step)
{
    const __m512i take_even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24,
                                                26, 28, 30);
    const __m512i take_odd = _mm512_add_epi32(take_even, _mm512_set1_epi32(1));
    const size_t whole = len / 32 * 16;   /* outputs of the whole steps, per phase */
    const size_t rest = len - 2 * whole;  /* 0 .. 31 floats */
    const __mmask16 first = rest >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << rest) - 1u);
    const __mmask16 second = rest > 16 ? (__mmask16)((1u << (rest - 16)) - 1u) : 0;
    const __mmask16 evens = (__mmask16)((1u << ((rest + 1) / 2)) - 1u);
    const __mmask16 odds = (__mmask16)((1u << (rest / 2)) - 1u);
    for (size_t r = 0; r < rows; ++r, in += in_step, even += out_step, odd += out_step) {
        for (size_t t = 0; t < whole; t += 16) {
            const __m512 a = _mm512_loadu_ps(in + 2 * t), b = _mm512_loadu_ps(in + 2 * t + 16);
            _mm512_storeu_ps(even + t, _mm512_permutex2var_ps(a, take_even, b));
            _mm512_storeu_ps(odd + t, _mm512_permutex2var_ps(a, take_odd, b));
        }
        if (rest == 0) continue;
        const __m512 a = _mm512_maskz_loadu_ps(first, in + 2 * whole);
        const __m512 b = _mm512_maskz_loadu_ps(second, in + 2 * whole + 16);
        _mm512_mask_storeu_ps(even + whole, evens, _mm512_permutex2var_ps(a, take_even, b));
        _mm512_mask_storeu_ps(odd + whole, odds, _mm512_permutex2var_ps(a, take_odd, b));
    }
}

void sb_dw_flat_avx512_exact(size_t plane, size_t taps, const float *w, const ptrdiff_t *off,
                             const uint16_t *masks, const float *in, float *out)
{
    dw_flat(plane, taps, w, off, masks, in, out, 0);
}

void sb_dw_flat_avx512_fast(size_t plane, size_t taps, const float *w, const ptrdiff_t *off,
                            const uint16_t *masks, const float *in, float *out)
{
    dw_flat(plane, taps, w, off, masks, in, out, 1);
}
#endif
