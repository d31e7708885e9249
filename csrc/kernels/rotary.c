/* Rotary position embedding, one row at a time (rotary.h). */
#include <string.h>
#include "kernels/rotary.h"

void sb_rotary_row(const float *x, float *y, int64_t head_size, int64_t rotary_dim, int interleaved,
                   const float *cos_row, const float *sin_row)
{
    int64_t half = rotary_dim / 2;
    float pair[2];
    if (y != x && head_size > rotary_dim)
        memcpy(y + rotary_dim, x + rotary_dim, (size_t)(head_size - rotary_dim) * sizeof *y);
    for (int64_t k = 0; k < half; ++k) {
        int64_t i1 = interleaved ? 2 * k : k, i2 = interleaved ? 2 * k + 1 : k + half;
        float x1 = x[i1], x2 = x[i2], c = cos_row[k], s = sin_row[k];
        float cx1 = c * x1, sx2 = s * x2, sx1 = s * x1, cx2 = c * x2;
        pair[0] = cx1 - sx2;
        pair[1] = sx1 + cx2;
        y[i1] = pair[0];
        y[i2] = pair[1];
    }
}
