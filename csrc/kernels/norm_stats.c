/* Layer normalization's statistics (norm_stats.h). */
#include "kernels/norm_stats.h"
#include "math/activation.h"

void sb_layer_norm_stats(const float *x, int64_t rows, int64_t n, float eps, float *mean, float *rstd)
{
    for (int64_t r = 0; r < rows; ++r) {
        const float *row = x + r * n;
        volatile float s = 0.0f;   /* serial sums, one rounded add each */
        for (int64_t j = 0; j < n; ++j) s = s + row[j];
        float m = s / (float)n;
        volatile float q = 0.0f;
        for (int64_t j = 0; j < n; ++j) {
            float d = row[j] - m;
            q = q + d * d;
        }
        float var = q / (float)n;
        if (mean) mean[r] = sbt_canonical(m);
        if (rstd) rstd[r] = sbt_canonical(1.0f / __builtin_sqrtf(var + eps));
    }
}

void sb_lp_normalize(const float *x, int64_t outer, int64_t n, int64_t inner, int p, float *y)
{
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
            const float *line = x + o * n * inner + i;
            volatile float s = 0.0f;
            for (int64_t j = 0; j < n; ++j) {
                float v = line[j * inner];
                s = s + (p == 1 ? __builtin_fabsf(v) : v * v);
            }
            float norm = p == 1 ? s : __builtin_sqrtf(s);
            float *out = y + o * n * inner + i;
            for (int64_t j = 0; j < n; ++j)
                out[j * inner] = norm == 0.0f ? 0.0f : sbt_canonical(line[j * inner] / norm);
        }
}
