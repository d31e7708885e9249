/* Nearest resizing's inner loops, shared by sb_resize2d (torch's rules,
 * resize.c) and ONNX's general forms (resize_general.c): an output row is
 * its source row's values, each repeated where the factor is whole, and a
 * row whose source row is the previous row's is a copy of it. Values are
 * copied, NaNs made canonical (sbt_canonical), so the bits are the same
 * whichever loop writes them. */
#ifndef SB_NEAREST_ROWS_H
#define SB_NEAREST_ROWS_H

#include <stdint.h>
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

#endif
