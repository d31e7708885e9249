/* Nearest resizing's inner loops, shared by sb_resize2d (torch's rules,
 * resize.c) and ONNX's general forms (resize_general.c): an output row is
 * its source row's values, each repeated where the factor is whole, and a
 * row whose source row is the previous row's is a copy of it. Values are
 * copied, NaNs made canonical (sbt_canonical), so the bits are the same
 * whichever loop writes them. */
#ifndef SB_NEAREST_ROWS_H
#define SB_NEAREST_ROWS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "math/activation.h"

/* out[i f + k] = src[i] (canonical) for i < whole, k < f; f = 1 and 2
 * written out, so that they vectorize. */
static inline void sb_repeat_columns(const float *src, int64_t whole, int64_t f, float *out)
{
    if (f == 1) {
        for (int64_t i = 0; i < whole; ++i) out[i] = sbt_canonical(src[i]);
    } else if (f == 2) {
        for (int64_t i = 0; i < whole; ++i) {
            const float v = sbt_canonical(src[i]);
            out[2 * i] = v;
            out[2 * i + 1] = v;
        }
    } else {
        for (int64_t i = 0; i < whole; ++i) {
            const float v = sbt_canonical(src[i]);
            for (int64_t k = 0; k < f; ++k) out[i * f + k] = v;
        }
    }
}

/* Input columns repeated whole at factor f (> 0) in a row of ow outputs
 * from w inputs: the first min(ow / f, w). */
static inline int64_t sb_repeated_columns(int64_t f, int64_t w, int64_t ow)
{
    return ow / f < w ? ow / f : w;
}

/* A nearest resize of planes of h x w into planes of oh x ow: output
 * (oy, ox) is input (rows[oy], cols[ox]) of the same plane, rows or cols
 * null where that axis is left as it is; factor_w from sb_whole_factor. */
typedef struct {
    const float *x;
    float *y;
    int64_t h, w, oh, ow;
    const int64_t *rows, *cols;
    int64_t factor_w;
} sb_nearest_map;

/* The whole factor f with cols[ox] == min(ox / f, w - 1) for every output
 * column (1 when cols is null), or 0. */
static inline int64_t sb_whole_factor(const int64_t *cols, int64_t w, int64_t ow)
{
    if (!cols) return 1;
    const int64_t f = ow / w;
    if (f < 1) return 0;
    for (int64_t ox = 0; ox < ow; ++ox)
        if (cols[ox] != (ox / f < w - 1 ? ox / f : w - 1)) return 0;
    return f;
}

/* Output rows [first, end) of all planes (row r: plane r / oh, row r % oh).
 * A row whose source row is the previous row's in the same plane is a copy
 * of it (never the row before `first`, which another thread may write). */
static inline void sb_nearest_rows(const sb_nearest_map *m, size_t first, size_t end)
{
    int64_t previous = -1;
    for (size_t row = first; row < end; ++row) {
        const int64_t oy = (int64_t)(row % (size_t)m->oh);
        const size_t plane = row / (size_t)m->oh;
        const int64_t sy = m->rows ? m->rows[oy] : oy;
        float *out = m->y + row * (size_t)m->ow;
        if (oy > 0 && row > first && sy == previous) {
            memcpy(out, out - m->ow, (size_t)m->ow * sizeof(float));
        } else {
            const float *src = m->x + plane * (size_t)m->h * (size_t)m->w + (size_t)sy * (size_t)m->w;
            int64_t ox = 0;
            if (m->factor_w > 0) {
                const int64_t whole = sb_repeated_columns(m->factor_w, m->w, m->ow);
                sb_repeat_columns(src, whole, m->factor_w, out);
                ox = whole * m->factor_w;
            }
            for (; ox < m->ow; ++ox) out[ox] = sbt_canonical(src[m->cols[ox]]);
        }
        previous = sy;
    }
}

#endif
