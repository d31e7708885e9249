/* Linear attention's recurrence (linear_attention.h): plain loops in the
 * function body's order. */
#include "kernels/linear_attention.h"
#include "math/arith.h"

void sb_linear_attention_head(const sb_linear_attention_args *a)
{
    int64_t dk = a->dk, dv = a->dv;
    float *S = a->state, *w = a->scratch;
    int gated = a->rule == SB_LA_GATED || a->rule == SB_LA_GATED_DELTA;
    int delta = a->rule == SB_LA_DELTA || a->rule == SB_LA_GATED_DELTA;
    for (int64_t t = 0; t < a->steps; ++t) {
        const float *k = a->k + t * a->k_step, *v = a->v + t * a->v_step;
        if (gated) {
            const float *g = a->gate + t * a->gate_step;
            for (int64_t i = 0; i < dk; ++i) {
                float gi = g[a->gate_each == 1 ? 0 : i];
                for (int64_t j = 0; j < dv; ++j) S[i * dv + j] = sb_bin_mul(S[i * dv + j], gi);
            }
        }
        if (delta) {
            float beta = a->beta[t * a->beta_step];
            for (int64_t j = 0; j < dv; ++j) {
                float r = 0.0f;
                for (int64_t i = 0; i < dk; ++i) r = sb_bin_add(r, sb_bin_mul(S[i * dv + j], k[i]));
                w[j] = sb_bin_mul(beta, sb_bin_sub(v[j], r));
            }
        } else {
            for (int64_t j = 0; j < dv; ++j) w[j] = v[j];
        }
        for (int64_t i = 0; i < dk; ++i)
            for (int64_t j = 0; j < dv; ++j)
                S[i * dv + j] = sb_bin_add(S[i * dv + j], sb_bin_add(0.0f, sb_bin_mul(k[i], w[j])));
        for (int64_t g = 0; g < a->groups; ++g) {
            const float *q = a->q + t * a->q_step + g * dk;
            float *o = a->out + t * a->out_step + g * dv;
            for (int64_t j = 0; j < dv; ++j) {
                float acc = 0.0f;
                for (int64_t i = 0; i < dk; ++i) acc = sb_bin_add(acc, sb_bin_mul(q[i], S[i * dv + j]));
                o[j] = sb_bin_mul(a->scale, acc);
            }
        }
    }
}
