/* Col2Im (col2im.h): plain loops in torch's order. */
#include <string.h>
#include "kernels/col2im.h"
#include "math/arith.h"

void sb_col2im(const sb_col2im_args *a, const float *x, float *y)
{
    int d = a->dims;
    int64_t K = 1, L = 1, P = 1;
    for (int i = 0; i < d; ++i) K *= a->block[i], L *= a->grid[i], P *= a->image[i];
    memset(y, 0, (size_t)(a->n * a->c * P) * sizeof *y);
    for (int64_t n = 0; n < a->n; ++n)
        for (int64_t c = 0; c < a->c; ++c) {
            float *plane = y + (n * a->c + c) * P;
            int64_t k_at[SB_COL2IM_MAX_DIMS] = {0};
            for (int64_t k = 0; k < K; ++k) {
                const float *row = x + ((n * a->c + c) * K + k) * L;
                int64_t l_at[SB_COL2IM_MAX_DIMS] = {0};
                for (int64_t l = 0; l < L; ++l) {
                    int64_t at = 0, inside = 1;
                    for (int i = 0; i < d; ++i) {
                        int64_t p = l_at[i] * a->stride[i] - a->pad_begin[i] + k_at[i] * a->dilation[i];
                        inside &= p >= 0 && p < a->image[i];
                        at = at * a->image[i] + p;
                    }
                    if (inside) plane[at] = sb_bin_add(plane[at], row[l]);
                    for (int i = d - 1; i >= 0; --i) {
                        if (++l_at[i] < a->grid[i]) break;
                        l_at[i] = 0;
                    }
                }
                for (int i = d - 1; i >= 0; --i) {
                    if (++k_at[i] < a->block[i]) break;
                    k_at[i] = 0;
                }
            }
        }
}
