/* The packers: the layouts the tile kernels read (isa.h), written from plain
 * matrices with any element strides. A tile names them in its descriptor;
 * every tile of this build uses these generic ones, parametrized by its MR
 * and NR at run time. */
#include <string.h>
#include "isa/isa.h"
#include "framework/checked.h"
#include "framework/transpose.h"

/* A row piece of a strip: constant sizes become a few vector moves. */
static inline void copy_strip_row(float *dst, const float *src, size_t cols)
{
    switch (cols) {
    case 4: memcpy(dst, src, 4 * sizeof(float)); return;
    case 8: memcpy(dst, src, 8 * sizeof(float)); return;
    case 12: memcpy(dst, src, 12 * sizeof(float)); return;
    case 16: memcpy(dst, src, 16 * sizeof(float)); return;
    case 32: memcpy(dst, src, 32 * sizeof(float)); return;
    default: memcpy(dst, src, cols * sizeof(float)); return;
    }
}

void sb_pack_b_strips(const sb_tile *tile, const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                      size_t n, size_t p0, size_t kc, size_t strip0, size_t strip_end, float *dst)
{
    const size_t nr = (size_t)tile->nr;
    for (size_t s = strip0; s < strip_end; ++s) {
        size_t j0 = s * nr;
        size_t cols = j0 < n ? sb_min_size(n - j0, nr) : 0;
        const float *src = b + (ptrdiff_t)p0 * b_row + (ptrdiff_t)j0 * b_col;
        if (b_row == 1 && b_col != 1) {   /* B's columns contiguous (a transpose): transpose */
            sb_transpose_copy(dst, nr, src, b_col, cols, kc);
            for (size_t p = 0; p < kc; ++p)
                for (size_t j = cols; j < nr; ++j) dst[p * nr + j] = 0.0f;
        } else {
            for (size_t p = 0; p < kc; ++p, src += b_row) {
                float *out = dst + p * nr;
                if (b_col == 1) {
                    copy_strip_row(out, src, cols);
                } else {
                    for (size_t j = 0; j < cols; ++j) out[j] = src[(ptrdiff_t)j * b_col];
                }
                for (size_t j = cols; j < nr; ++j) out[j] = 0.0f;
            }
        }
        dst += kc * nr;
    }
}

/* sb_pack_b_strips' result, for panels: a row-major B is read row by row
 * across all the strips (a few whole cache lines per row, which the
 * prefetchers follow when B's rows are far apart). Packing all of B strip by
 * strip measured faster for tall products, whose B rows are close together.
 * A B whose columns are contiguous (linear's weights) is transposed strip by
 * strip there: read element by element across its columns it took 3 ns a
 * float (8 x 2048 x 1000: 2.5 ms, 0.3 ms after). */
void sb_pack_b_rows(const sb_tile *tile, const float *b, ptrdiff_t b_row, ptrdiff_t b_col,
                    size_t n, size_t p0, size_t kc, size_t strip0, size_t strip_end, float *dst)
{
    if (b_row == 1 && b_col != 1) {   /* B's columns contiguous: transposed strip by strip */
        sb_pack_b_strips(tile, b, b_row, b_col, n, p0, kc, strip0, strip_end, dst);
        return;
    }
    const size_t nr = (size_t)tile->nr, strip_floats = kc * nr;
    const size_t j_begin = strip0 * nr;
    const size_t j_live = n > j_begin ? sb_min_size(n - j_begin, (strip_end - strip0) * nr) : 0;
    const size_t whole = j_live / nr;   /* strips with every column inside B */
    if (b_col == 1) {
        for (size_t p = 0; p < kc; ++p) {
            const float *src = b + (ptrdiff_t)(p0 + p) * b_row + (ptrdiff_t)j_begin;
            float *out = dst + p * nr;
            for (size_t s = 0; s < whole; ++s) copy_strip_row(out + s * strip_floats, src + s * nr, nr);
        }
    } else {
        for (size_t s = 0; s < whole; ++s) {
            float *out = dst + s * strip_floats;
            const float *col = b + (ptrdiff_t)p0 * b_row + (ptrdiff_t)(j_begin + s * nr) * b_col;
            for (size_t p = 0; p < kc; ++p) {
                const float *src = col + (ptrdiff_t)p * b_row;
                for (size_t j = 0; j < nr; ++j) out[p * nr + j] = src[(ptrdiff_t)j * b_col];
            }
        }
    }
    /* The ragged strip (if any) and zero strips past n. */
    sb_pack_b_strips(tile, b, b_row, b_col, n, p0, kc, strip0 + whole, strip_end,
                     dst + whole * strip_floats);
}

void sb_pack_a_strips(const sb_tile *tile, const float *a, ptrdiff_t a_row, ptrdiff_t a_col,
                      size_t i0, size_t rows, size_t p0, size_t kc, float *dst)
{
    const size_t mr = (size_t)tile->mr;
    for (size_t r0 = 0; r0 < rows; r0 += mr) {
        size_t live = sb_min_size(rows - r0, mr);
        const float *src = a + (ptrdiff_t)(i0 + r0) * a_row + (ptrdiff_t)p0 * a_col;
        if (a_col == 1) {   /* row-major A: a transpose into the strip */
            sb_transpose_copy(dst, mr, src, a_row, live, kc);
            for (size_t r = live; r < mr; ++r)
                for (size_t p = 0; p < kc; ++p) dst[p * mr + r] = 0.0f;
        } else {
            for (size_t p = 0; p < kc; ++p) {
                const float *col = src + (ptrdiff_t)p * a_col;
                float *out = dst + p * mr;
                for (size_t r = 0; r < live; ++r) out[r] = col[(ptrdiff_t)r * a_row];
                for (size_t r = live; r < mr; ++r) out[r] = 0.0f;
            }
        }
        dst += kc * mr;
    }
}

void sb_pack_a_block(const sb_tile *tile, size_t m, size_t k, size_t kb, const float *a,
                     ptrdiff_t a_row, ptrdiff_t a_col, float *dst)
{
    const size_t strips = sb_ceil_div(m, (size_t)tile->mr);
    const size_t kc = sb_min_size(k - kb * SB_KC, SB_KC);
    tile->pack_a(tile, a, a_row, a_col, 0, m, kb * SB_KC, kc,
                 dst + kb * SB_KC * strips * (size_t)tile->mr);
}

void sb_pack_a_whole(const sb_tile *tile, size_t m, size_t k, const float *a, ptrdiff_t a_row,
                     ptrdiff_t a_col, float *dst)
{
    for (size_t kb = 0; kb * SB_KC < k; ++kb) sb_pack_a_block(tile, m, k, kb, a, a_row, a_col, dst);
}
