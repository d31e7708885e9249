/* The negative log-likelihood loss (nll.h). */
#include "samebits.h"
#include "kernels/nll.h"
#include "math/activation.h"

int sb_nll_loss(const sb_nll_args *a, float *out, int64_t *bad)
{
    volatile float total = 0.0f, weights = 0.0f;   /* serial sums, as written */
    for (int64_t n = 0; n < a->n; ++n)
        for (int64_t d = 0; d < a->d; ++d) {
            int64_t t = a->target[n * a->d + d];
            float loss = 0.0f, w = 0.0f;
            if (!(a->has_ignore && t == a->ignore_index)) {
                if (t < 0 || t >= a->c) {
                    *bad = t;
                    return SB_ERR_INDEX;
                }
                w = a->weight ? a->weight[t] : 1.0f;
                loss = -a->x[(n * a->c + t) * a->d + d] * w;
            }
            if (a->reduction == SB_NLL_NONE) out[n * a->d + d] = sbt_canonical(loss);
            total = total + loss;
            weights = weights + w;
        }
    if (a->reduction == SB_NLL_SUM) out[0] = sbt_canonical(total);
    else if (a->reduction == SB_NLL_MEAN) out[0] = sbt_canonical(total / weights);
    return SB_OK;
}
