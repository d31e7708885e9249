/* AffineGrid (affine_grid.h): plain loops in the function body's order. */
#include "kernels/affine_grid.h"
#include "math/arith.h"

/* Base coordinate j of an axis of `size` points. */
static float base(int64_t size, int align_corners, int64_t j)
{
    float s = (float)size, step, start;
    if (align_corners) {
        if (size == 1) return -1.0f;
        step = 2.0f / (s - 1.0f), start = -1.0f;
    } else {
        step = 2.0f / s;
        start = -1.0f + step / 2.0f;
    }
    return start + (float)j * step;
}

void sb_affine_grid(int dims, int align_corners, int64_t n, int64_t d, int64_t h, int64_t w,
                    const float *theta, float *grid)
{
    int64_t depth = dims == 3 ? d : 1, cols = dims + 1;
    for (int64_t b = 0; b < n; ++b) {
        const float *t = theta + b * dims * cols;
        for (int64_t k = 0; k < depth; ++k) {
            float z = base(depth, align_corners, k);
            for (int64_t i = 0; i < h; ++i) {
                float y = base(h, align_corners, i);
                for (int64_t j = 0; j < w; ++j) {
                    float x = base(w, align_corners, j);
                    float *out = grid + (((b * depth + k) * h + i) * w + j) * dims;
                    for (int r = 0; r < dims; ++r) {
                        const float *row = t + r * cols;
                        /* 2-D: the body's zero column meets z */
                        float rz = dims == 3 ? row[2] : 0.0f, tr = row[dims];
                        float acc = 0.0f;
                        acc = sb_bin_add(acc, sb_bin_mul(row[0], x));
                        acc = sb_bin_add(acc, sb_bin_mul(row[1], y));
                        acc = sb_bin_add(acc, sb_bin_mul(rz, z));
                        acc = sb_bin_add(acc, sb_bin_mul(tr, 1.0f));
                        out[r] = acc;
                    }
                }
            }
        }
    }
}
