/* An input plane's rows stored zero-padded and split by column phase
 * (conv_internal.h: sb_padded_rows), for the convolution's patch gatherer
 * (conv.c) and the depthwise kernel (depthwise.c).
 *
 * Padded column c (input column c - pad_left, +0 outside the input) of a
 * stored row is stored at (c % sw) * pws + c / sw. Output column ox of tap
 * column kx reads padded column ox*sw + kx*dw: phase (kx*dw) % sw, position
 * ox + (kx*dw) / sw in it, so consecutive outputs read consecutive floats
 * whatever the stride and dilation. The padding is real +0 values, so an
 * infinite or NaN weight meeting padding still gives NaN. */
#include <string.h>
#include "kernels/conv_internal.h"
#include "framework/checked.h"
#include "kernels/strided_copy.h"

/* Stored rows of at most this many floats are built with one memset. */
#define SHORT_ROW 32

int sb_padded_rows_size(const sb_conv_desc *d, sb_padded_rows *rows)
{
    size_t reach_w, span_w;   /* pw = (out_w - 1) * stride_w + reach_w + 1 */
    if (!sb_mul_ok(d->kw - 1, d->dil_w, &reach_w) ||
        !sb_mul_ok(d->out_w - 1, d->stride_w, &span_w) || !sb_add_ok(span_w, reach_w, &span_w) ||
        !sb_add_ok(span_w, 1, &rows->pw))
        return 0;
    rows->d = d;
    rows->pws = sb_ceil_div(rows->pw, d->stride_w);
    rows->rs = rows->pws * d->stride_w;   /* <= pw + stride_w - 1: no overflow */
    rows->lo = rows->hi = NULL;
    return 1;
}

void sb_padded_phase_bounds(const sb_padded_rows *rows, size_t *lo, size_t *hi)
{
    const sb_conv_desc *d = rows->d;
    const size_t sw = d->stride_w, pl = d->pad_left, pws = rows->pws, pw = rows->pw;
    const size_t end = pl + d->w < pw ? pl + d->w : pw;   /* columns < end may be input */
    for (size_t p = 0; p < sw; ++p) {
        lo[p] = p >= pl ? 0 : sb_ceil_div(pl - p, sw);
        hi[p] = end > p ? sb_ceil_div(end - p, sw) : 0;
        if (lo[p] > pws) lo[p] = pws;
        if (hi[p] < lo[p]) hi[p] = lo[p];
    }
}

void sb_padded_tap_offsets(const sb_padded_rows *rows, size_t channels, size_t plane_floats,
                           ptrdiff_t *off)
{
    const sb_conv_desc *d = rows->d;
    for (size_t c = 0; c < channels; ++c)
        for (size_t ky = 0; ky < d->kh; ++ky)
            for (size_t kx = 0; kx < d->kw; ++kx) {
                const size_t col = kx * d->dil_w;
                *off++ = (ptrdiff_t)(c * plane_floats + ky * d->dil_h * rows->rs +
                                     col % d->stride_w * rows->pws + col / d->stride_w);
            }
}

void sb_phase_tap_offsets(const sb_padded_rows *rows, size_t channels, size_t plane_floats,
                          size_t rows_ph, ptrdiff_t *off)
{
    const sb_conv_desc *d = rows->d;
    const size_t sh = d->stride_h, sw = d->stride_w, pws = rows->pws;
    for (size_t c = 0; c < channels; ++c)
        for (size_t ky = 0; ky < d->kh; ++ky)
            for (size_t kx = 0; kx < d->kw; ++kx) {
                const size_t y = ky * d->dil_h, x = kx * d->dil_w;
                *off++ = (ptrdiff_t)(c * plane_floats +
                                     ((y % sh * sw + x % sw) * rows_ph + y / sh) * pws + x / sw);
            }
}

/* `rows` rows split by the path's splitter where it has one, else by
 * strided_copy.h's, a row at a time. */
static void split_rows(sb_split_stride2_fn split2, float *even, float *odd, const float *in,
                       size_t len, size_t rows, ptrdiff_t in_step, ptrdiff_t out_step)
{
    if (split2) {
        split2(even, odd, in, len, rows, in_step, out_step);
        return;
    }
    for (size_t r = 0; r < rows; ++r, in += in_step, even += out_step, odd += out_step)
        split_stride2(even, odd, in, len);
}

/* The inside columns of `count` input rows (in_step floats apart from src)
 * into stored rows (out_step floats apart from dst) whose column phase p
 * starts at + p * phase_step; the padding columns are left as they are. Both
 * layouts take it: rows with their phases side by side (phase_step pws) and
 * phase planes. */
static void put_inside(const sb_padded_rows *rows, const float *src, float *dst,
                       size_t phase_step, size_t count, ptrdiff_t in_step, ptrdiff_t out_step)
{
    const sb_conv_desc *d = rows->d;
    const size_t sw = d->stride_w, pl = d->pad_left;
    if (sw == 2) {   /* input column i is padded column i + pl */
        const size_t even_phase = pl % 2;
        const size_t inside = rows->hi[0] - rows->lo[0] + rows->hi[1] - rows->lo[1];
        split_rows(d->isa->dwconv->split_stride2, dst + even_phase * phase_step + pl / 2,
                   dst + (1 - even_phase) * phase_step + (pl + 1) / 2, src, inside, count,
                   in_step, out_step);
        return;
    }
    for (size_t r = 0; r < count; ++r, src += in_step, dst += out_step)
        for (size_t p = 0; p < sw; ++p) {
            const size_t lo = rows->lo[p], n = rows->hi[p] - lo;
            if (n == 0) continue;
            float *to = dst + p * phase_step + lo;
            const float *from = src + (p + lo * sw - pl);
            if (sw == 1 && n <= SHORT_ROW) copy_short(to, from, n);
            else if (sw == 1) memcpy(to, from, n * sizeof(float));
            else for (size_t q = 0; q < n; ++q) to[q] = from[q * sw];
        }
}

/* Of the stored rows prow0 + [0, nrows), the input rows are [*s0, *s1) (none
 * when the input has no columns); the others are padding rows. */
static void inside_rows(const sb_conv_desc *d, size_t prow0, size_t nrows, size_t *s0, size_t *s1)
{
    const size_t top = d->pad_top;
    *s0 = prow0 < top ? sb_min_size(top - prow0, nrows) : 0;
    *s1 = d->h + top > prow0 ? sb_min_size(d->h + top - prow0, nrows) : 0;
    if (*s1 < *s0 || d->w == 0) *s1 = *s0;
}

void sb_padded_build_rows(const sb_padded_rows *rows, float *dst, size_t plane, size_t prow0,
                          size_t nrows, size_t slack)
{
    const sb_conv_desc *d = rows->d;
    const size_t sw = d->stride_w, pws = rows->pws, rs = rows->rs;
    size_t s0, s1;
    inside_rows(d, prow0, nrows, &s0, &s1);
    if (sw == 1 && rs == d->w) {
        /* No padding across: the inside rows are the input's, one after
         * another, in one copy (rows of one float, magika's 256 x 512 x 1,
         * took a call each: 9% of the layer); rows above and below are +0. */
        memset(dst, 0, s0 * rs * sizeof(float));
        if (s1 > s0)
            memcpy(dst + s0 * rs, d->x + (plane * d->h + (prow0 + s0 - d->pad_top)) * d->w,
                   (s1 - s0) * rs * sizeof(float));
        memset(dst + s1 * rs, 0, ((nrows - s1) * rs + slack) * sizeof(float));
        return;
    }
    /* Short rows (small planes): one memset for the whole block, then only the
     * input is copied; per-row library calls cost more than the rows there. */
    const int zeroed = rs <= SHORT_ROW;
    if (zeroed) memset(dst, 0, (nrows * rs + slack) * sizeof(float));
    for (size_t s = 0; s < nrows; ++s, dst += rs) {
        const size_t prow = prow0 + s;
        if (s < s0 || s >= s1) {
            if (!zeroed) memset(dst, 0, rs * sizeof(float));
            continue;
        }
        if (!zeroed)   /* each phase's padding */
            for (size_t p = 0; p < sw; ++p) {
                float *row = dst + p * pws;
                memset(row, 0, rows->lo[p] * sizeof(float));
                memset(row + rows->hi[p], 0, (pws - rows->hi[p]) * sizeof(float));
            }
        put_inside(rows, d->x + (plane * d->h + (prow - d->pad_top)) * d->w, dst, pws, 1, 0, 0);
    }
    if (!zeroed) memset(dst, 0, slack * sizeof(float));
}

void sb_padded_build_phase_planes(const sb_padded_rows *rows, float *dst, size_t plane,
                                  size_t prow0, size_t nrows, size_t rows_ph, size_t slack)
{
    const sb_conv_desc *d = rows->d;
    const size_t sh = d->stride_h, sw = d->stride_w, pws = rows->pws;
    const size_t phase_floats = rows_ph * pws;
    memset(dst, 0, (sh * sw * phase_floats + slack) * sizeof(float));
    /* stored rows [s0, s1) are input rows; the rest stay +0 */
    const size_t top = d->pad_top;
    size_t s0, s1;
    inside_rows(d, prow0, nrows, &s0, &s1);
    if (s0 >= s1) return;
    /* the rows of one row phase ry are consecutive in its phase planes, pws
     * apart, and sh input rows apart in the input */
    for (size_t ry = 0; ry < sh; ++ry) {
        const size_t first = s0 + (ry + sh - s0 % sh) % sh;   /* first s >= s0 with s % sh == ry */
        if (first >= s1) continue;
        put_inside(rows, d->x + (plane * d->h + (prow0 + first - top)) * d->w,
                   dst + ry * sw * phase_floats + first / sh * pws, phase_floats,
                   (s1 - first + sh - 1) / sh, (ptrdiff_t)(sh * d->w), (ptrdiff_t)pws);
    }
}
