/* avx512 path: depthwise planes at stride 2 read in place (sb_dw_stride2_fn,
 * kernels.h; kernels/depthwise.c's stride-2 route).
 *
 * Output positions are in the lanes. The inputs one tap needs for 16
 * neighbouring outputs lie two floats apart, so each input row the chunk
 * needs is split once by column parity (the path's split_stride2) into a
 * ring of rows in scratch, +0 around them; a tap of 16 outputs is then one
 * load of a half. The plane itself is read in place: no padded copy of the
 * band split by row and column phase (the pitched route) and no transposes
 * into channel lanes and back (the lanes route, whose transposes were half
 * of MobileNetV3's 3 x 3 / 2 layer at 112 x 112).
 *
 * Each output sums its taps in increasing (ky, kx) from +0, one multiply and
 * one add each (one fused multiply-add in fast mode), padding taps
 * multiplying +0: the same operations in the same order as the other
 * depthwise kernels, so the same bits. */
#include "isa/isa.h"

#if defined(__AVX512F__) && defined(__FMA__) && !defined(SB_EMULATE_AVX512)
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include "isa/avx512/zmm_step.h"

/* Sums in flight at once: up to 4 vector columns of 2 output rows, so that
 * the adds' latency hides behind the other sums' loads (a 28-wide map has 2
 * vector columns, a 7-wide one 1). */
#define COLUMNS_AT_ONCE 4
#define ROWS_AT_ONCE 2

/* dw_flat_avx512.c: rows split by column parity (sb_split_stride2_fn) */
void sb_split_stride2_avx512(float *even, float *odd, const float *in, size_t len, size_t rows,
                             ptrdiff_t in_step, ptrdiff_t out_step);

/* G vector columns (16*G outputs from ox0) of R output rows: for output
 * row i, tap (ky, kx) reads stored row row[i*kh + ky] (split by parity: the
 * odd floats a pitch after the even) from its element ox0 + tap[kx]
 * (kx - pad_left = 2*s + p: tap[kx] = s, plus a pitch when p is 1). Rows
 * outside the plane are a stored row of +0. */
static inline __attribute__((always_inline)) void
stride2_block(const int R, const int G, const float *const *row, const ptrdiff_t *tap, size_t kh,
              size_t kw, const float *wts, size_t ox0, float *out, size_t ow, size_t live,
              const int fused)
{
    __m512 acc[ROWS_AT_ONCE][COLUMNS_AT_ONCE];
#pragma GCC unroll 2
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) acc[i][g] = _mm512_setzero_ps();
    for (size_t ky = 0; ky < kh; ++ky, wts += kw) {
        const float *base[ROWS_AT_ONCE];
#pragma GCC unroll 2
        for (int i = 0; i < R; ++i) base[i] = row[(size_t)i * kh + ky] + ox0;
        for (size_t kx = 0; kx < kw; ++kx) {
            const __m512 wt = _mm512_set1_ps(wts[kx]);
#pragma GCC unroll 2
            for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
                for (int g = 0; g < G; ++g)
                    acc[i][g] = zmm_step(acc[i][g], wt,
                                         _mm512_loadu_ps(base[i] + tap[kx] + 16 * g), fused);
        }
    }
#pragma GCC unroll 2
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
        for (int g = 0; g < G; ++g) {
            const size_t n = live > 16 * (size_t)g ? live - 16 * (size_t)g : 0;
            const __mmask16 store = n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
            _mm512_mask_storeu_ps(out + (size_t)i * ow + 16 * g, store, zmm_canon(acc[i][g]));
        }
}

/* Output rows [r, r + R) of every vector column. */
static inline __attribute__((always_inline)) void
stride2_rows(const int R, const float *const *row, const ptrdiff_t *tap, size_t kh, size_t kw,
             const float *wts, size_t ow, float *out, const int fused)
{
    size_t ox0 = 0;
    for (; ox0 + 16 * COLUMNS_AT_ONCE <= ow; ox0 += 16 * COLUMNS_AT_ONCE)
        stride2_block(R, COLUMNS_AT_ONCE, row, tap, kh, kw, wts, ox0, out + ox0, ow,
                      16 * COLUMNS_AT_ONCE, fused);
    switch ((ow - ox0 + 15) / 16) {   /* the last 1 to 63 columns */
    case 4: stride2_block(R, 4, row, tap, kh, kw, wts, ox0, out + ox0, ow, ow - ox0, fused); break;
    case 3: stride2_block(R, 3, row, tap, kh, kw, wts, ox0, out + ox0, ow, ow - ox0, fused); break;
    case 2: stride2_block(R, 2, row, tap, kh, kw, wts, ox0, out + ox0, ow, ow - ox0, fused); break;
    case 1: stride2_block(R, 1, row, tap, kh, kw, wts, ox0, out + ox0, ow, ow - ox0, fused); break;
    default: break;
    }
}

static inline __attribute__((always_inline)) void
dw_stride2(const float *in, size_t h, size_t w, size_t kh, size_t kw, size_t pad_top,
           size_t pad_left, const float *wts, size_t oy0, size_t rows, size_t ow, float *out,
           float *scratch, const int fused)
{
    const size_t pitch = SB_DW_STRIDE2_PITCH(ow), slots = kh + 2 * (ROWS_AT_ONCE - 1);
    ptrdiff_t held[SB_DW_STRIDE2_MAX_K + 2 * (ROWS_AT_ONCE - 1)];   /* each slot's input row */
    const float *row[ROWS_AT_ONCE * SB_DW_STRIDE2_MAX_K];
    ptrdiff_t tap[SB_DW_STRIDE2_MAX_K];
    for (size_t kx = 0; kx < kw; ++kx) {
        const ptrdiff_t d = (ptrdiff_t)kx - (ptrdiff_t)pad_left;
        const ptrdiff_t s = d >= 0 ? d / 2 : -((1 - d) / 2);   /* floor(d / 2) */
        tap[kx] = s + (d - 2 * s ? (ptrdiff_t)pitch : 0);
    }
    for (size_t k = 0; k < slots; ++k) held[k] = PTRDIFF_MIN;
    /* the columns the taps can reach (kx - pad_left < 16: element j <
     * 16*ceil(ow/16) + 8), of which a row's split writes even elements
     * [0, ceil(cols/2)) and odd ones [0, cols/2) */
    const size_t half = pitch - SB_DW_STRIDE2_MARGIN;
    const size_t cols = w < 2 * half ? w : 2 * half;
    const size_t evens = SB_DW_STRIDE2_MARGIN + (cols + 1) / 2, odds = SB_DW_STRIDE2_MARGIN + cols / 2;
    /* +0 everywhere the rows never write, once: all of the slot of the
     * rows outside the plane, and before and after every row's elements */
    float *zeros = scratch + 2 * slots * pitch;
    memset(zeros, 0, 2 * pitch * sizeof(float));
    for (size_t k = 0; k < slots; ++k) {
        float *even = scratch + 2 * k * pitch, *odd = even + pitch;
        memset(even, 0, SB_DW_STRIDE2_MARGIN * sizeof(float));
        memset(even + evens, 0, (pitch - evens) * sizeof(float));
        memset(odd, 0, SB_DW_STRIDE2_MARGIN * sizeof(float));
        memset(odd + odds, 0, (pitch - odds) * sizeof(float));
    }
    for (size_t r = 0; r < rows;) {
        const int R = rows - r >= ROWS_AT_ONCE ? ROWS_AT_ONCE : 1;
        for (int i = 0; i < R; ++i) {
            const ptrdiff_t top = 2 * (ptrdiff_t)(oy0 + r + (size_t)i) - (ptrdiff_t)pad_top;
            for (size_t ky = 0; ky < kh; ++ky) {
                const ptrdiff_t iy = top + (ptrdiff_t)ky;
                float *slot = zeros;
                if (iy >= 0 && iy < (ptrdiff_t)h) {
                    /* the rows in use are consecutive, at most `slots`: distinct slots */
                    const size_t k = (size_t)iy % slots;
                    slot = scratch + 2 * k * pitch;
                    if (held[k] != iy) {
                        sb_split_stride2_avx512(slot + SB_DW_STRIDE2_MARGIN,
                                                slot + pitch + SB_DW_STRIDE2_MARGIN,
                                                in + iy * (ptrdiff_t)w, cols, 1, 0, 0);
                        held[k] = iy;
                    }
                }
                row[(size_t)i * kh + ky] = slot + SB_DW_STRIDE2_MARGIN;
            }
        }
        if (R == ROWS_AT_ONCE)
            stride2_rows(ROWS_AT_ONCE, row, tap, kh, kw, wts, ow, out, fused);
        else
            stride2_rows(1, row, tap, kh, kw, wts, ow, out, fused);
        r += (size_t)R, out += (size_t)R * ow;
    }
}

void sb_dw_stride2_avx512_exact(const float *in, size_t h, size_t w, size_t kh, size_t kw,
                                size_t pad_top, size_t pad_left, const float *wts, size_t oy0,
                                size_t rows, size_t ow, float *out, float *scratch)
{
    dw_stride2(in, h, w, kh, kw, pad_top, pad_left, wts, oy0, rows, ow, out, scratch, 0);
}

void sb_dw_stride2_avx512_fast(const float *in, size_t h, size_t w, size_t kh, size_t kw,
                               size_t pad_top, size_t pad_left, const float *wts, size_t oy0,
                               size_t rows, size_t ow, float *out, float *scratch)
{
    dw_stride2(in, h, w, kh, kw, pad_top, pad_left, wts, oy0, rows, ow, out, scratch, 1);
}
#endif
