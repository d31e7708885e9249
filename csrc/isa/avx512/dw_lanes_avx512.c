/* avx512 path: depthwise convolution with 16 channels in the vector lanes
 * (sb_dw_lanes_fn, kernels.h; kernels/depthwise.c's lanes route).
 *
 * With output positions in the lanes (the flat and pitched kernels), each
 * tap of a 5x5 layer over a 14 x 14 map is an unaligned load that splits a
 * cache line 15 times in 16, and a masked one: about two cycles a vector.
 * With channels in the lanes, every tap of every output is one aligned load
 * of a block's padded input and one multiply-add with the tap's 16 weights,
 * whatever the stride, dilation and map; the blocks are turned over on the
 * way in and out (16 x 16 transposes, a quarter of a shuffle a float).
 *
 * Each output still sums its taps in increasing t from +0, one multiply and
 * one add each (one fused multiply-add in fast mode), padding taps
 * multiplying the stored +0: the same operations in the same order as the
 * other depthwise kernels, so the same bits. */
#include "isa/isa.h"

#if defined(__AVX512F__) && defined(__FMA__) && !defined(SB_EMULATE_AVX512)
#include <immintrin.h>
#include "isa/avx512/zmm_step.h"

/* Outputs of a row in flight at once: independent chains, at least the 8
 * that two multiply-add pipes of four cycles' latency need, with slack. */
#define GROUP 12

/* Outputs ox0 .. ox0 + G - 1 of one row. */
static inline __attribute__((always_inline)) void
lanes_group(const int G, size_t taps, const float *w, const ptrdiff_t *off, const float *in,
            size_t in_col, float *out, const int fused)
{
    __m512 acc[GROUP];
#pragma GCC unroll 12
    for (int g = 0; g < G; ++g) acc[g] = _mm512_setzero_ps();
    for (size_t t = 0; t < taps; ++t) {
        const __m512 wt = _mm512_load_ps(w + 16 * t);
        const float *tap = in + off[t];
#pragma GCC unroll 12
        for (int g = 0; g < G; ++g)
            acc[g] = zmm_step(acc[g], wt, _mm512_load_ps(tap + (size_t)g * in_col), fused);
    }
#pragma GCC unroll 12
    for (int g = 0; g < G; ++g) _mm512_store_ps(out + 16 * g, zmm_canon(acc[g]));
}

static inline __attribute__((always_inline)) void
dw_lanes(size_t rows, size_t ow, size_t taps, const float *w, const ptrdiff_t *off,
         const float *in, size_t in_row, size_t in_col, float *out, const int fused)
{
    for (size_t oy = 0; oy < rows; ++oy, in += in_row) {
        size_t ox = 0;
        for (; ox + GROUP <= ow; ox += GROUP, out += 16 * GROUP)
            lanes_group(GROUP, taps, w, off, in + ox * in_col, in_col, out, fused);
#define LANES_REST(G)                                                                        \
    case G: lanes_group(G, taps, w, off, in + ox * in_col, in_col, out, fused); break
        switch (ow - ox) {
        LANES_REST(1); LANES_REST(2); LANES_REST(3); LANES_REST(4);
        LANES_REST(5); LANES_REST(6); LANES_REST(7); LANES_REST(8);
        LANES_REST(9); LANES_REST(10); LANES_REST(11);
        default: break;
        }
#undef LANES_REST
        out += 16 * (ow - ox);
    }
}

void sb_dw_lanes_avx512_exact(size_t rows, size_t ow, size_t taps, const float *w,
                              const ptrdiff_t *off, const float *in, size_t in_row,
                              size_t in_col, float *out)
{
    dw_lanes(rows, ow, taps, w, off, in, in_row, in_col, out, 0);
}

void sb_dw_lanes_avx512_fast(size_t rows, size_t ow, size_t taps, const float *w,
                             const ptrdiff_t *off, const float *in, size_t in_row,
                             size_t in_col, float *out)
{
    dw_lanes(rows, ow, taps, w, off, in, in_row, in_col, out, 1);
}

/* r[i] lane j <- r[j] lane i: pairs, then quads within 128-bit lanes, then
 * 128-bit lanes across registers. */
static inline __attribute__((always_inline)) void transpose16(__m512 r[16])
{
    __m512 t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
        const __m512d a = _mm512_castps_pd(t[4 * q]), b = _mm512_castps_pd(t[4 * q + 1]);
        const __m512d c = _mm512_castps_pd(t[4 * q + 2]), d = _mm512_castps_pd(t[4 * q + 3]);
        r[4 * q] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        r[4 * q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        r[4 * q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        r[4 * q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
    /* r[4q + j], 128-bit lane L: rows 4q .. 4q + 3 of column 4L + j */
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        t[j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
        t[4 + j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xdd);
        t[8 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xdd);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
        r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
        r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xdd);
        r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xdd);
    }
}

static inline __mmask16 first_lanes(size_t n)
{
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
}

void sb_dw_lanes_gather_avx512(const float *in, size_t channels, size_t plane_step, size_t rows,
                               size_t row_step, size_t cols, float *dst, size_t dst_row)
{
    __m512 v[16];
    for (size_t r = 0; r < rows; ++r, in += row_step, dst += dst_row)
        for (size_t x0 = 0; x0 < cols; x0 += 16) {
            const size_t n = cols - x0 < 16 ? cols - x0 : 16;
            const __mmask16 live = first_lanes(n);
#pragma GCC unroll 16
            for (size_t c = 0; c < 16; ++c)
                v[c] = c < channels ? _mm512_maskz_loadu_ps(live, in + c * plane_step + x0)
                                    : _mm512_setzero_ps();
            transpose16(v);
            /* constant indices, so that v stays in registers */
#pragma GCC unroll 16
            for (size_t i = 0; i < 16; ++i)
                if (i < n) _mm512_store_ps(dst + 16 * (x0 + i), v[i]);
        }
}

void sb_dw_lanes_scatter_avx512(const float *src, size_t pixels, size_t channels, float *out,
                                size_t plane_step)
{
    __m512 v[16];
    for (size_t p0 = 0; p0 < pixels; p0 += 16, src += 256) {
        const size_t n = pixels - p0 < 16 ? pixels - p0 : 16;
#pragma GCC unroll 16
        for (size_t i = 0; i < 16; ++i)
            v[i] = i < n ? _mm512_load_ps(src + 16 * i) : _mm512_setzero_ps();
        transpose16(v);
        const __mmask16 live = first_lanes(n);
#pragma GCC unroll 16
        for (size_t c = 0; c < 16; ++c)
            if (c < channels) _mm512_mask_storeu_ps(out + c * plane_step + p0, live, v[c]);
    }
}
#endif
