/* Linear attention's recurrence (ONNX LinearAttention, docs/onnx.md) for one
 * batch row and one key/value head, callable without a graph. The state S
 * is d_k x d_v (row i, column j); for each step t, in float32 with each
 * product, sum and difference rounded once, as ONNX's function body
 * computes it op by op:
 *   gated rules:  D[i][j] = S[i][j] * g[i]   (g = exp(decay), given)
 *   delta rules:  r[j] = sum over i = 0.. of D[i][j] * k[i] (from +0)
 *                 w[j] = beta * (v[j] - r[j])
 *   otherwise:    w[j] = v[j]
 *   S[i][j] = D[i][j] + (+0 + k[i] * w[j])
 *   for each of the head's query heads: o[j] = scale * (sum over i = 0..
 *   of q[i] * S[i][j], from +0)
 * NaN results are the canonical NaN. */
#ifndef SB_KERNELS_LINEAR_ATTENTION_H
#define SB_KERNELS_LINEAR_ATTENTION_H

#include <stdint.h>

enum { SB_LA_LINEAR = 0, SB_LA_GATED = 1, SB_LA_DELTA = 2, SB_LA_GATED_DELTA = 3 };

typedef struct {
    int rule;                    /* SB_LA_* */
    int64_t steps, dk, dv;
    int64_t groups;              /* query heads per key/value head */
    float scale;
    /* step t's operands: q of query head (group) g at q + t * q_step + g * dk;
     * k at k + t * k_step; v at v + t * v_step; g (gated) at gate +
     * t * gate_step, gate_each values (dk, or 1 for one per head); beta
     * (delta) at beta[t * beta_step] */
    const float *q, *k, *v, *gate, *beta;
    int64_t q_step, k_step, v_step, gate_step, gate_each, beta_step;
    /* o of group g at step t: out + t * out_step + g * dv */
    float *out;
    int64_t out_step;
    float *state;                /* dk x dv: the initial state in, the final one out */
    float *scratch;              /* dv floats */
} sb_linear_attention_args;

void sb_linear_attention_head(const sb_linear_attention_args *a);

#endif
